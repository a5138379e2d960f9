/**
 * The files sandbox (DESIGN §5). Every file service reaches the disk only through this.
 * Implementation: see createFilesSandbox below (to be written).
 */
export interface ResolvedPath {
  /** The root the path lives under (absolute, as configured). */
  root: string;
  /** Path relative to the root, with the platform separator. */
  relative: string;
  /** Absolute resolved path. */
  absolute: string;
  /** Whether a file already exists there (at resolve time). */
  exists: boolean;
}

export interface FilesSandbox {
  roots(): readonly string[];
  maxFileBytes(): number;
  /**
   * Check an untrusted path and resolve it inside an allowed root. Throws ServiceFailure with
   * `path_invalid` or `path_outside_roots` and a message the model can act on.
   */
  resolve(input: unknown): Promise<ResolvedPath>;
  /** Create a new file (flag `wx`), creating parent folders inside the root. `file_exists` if present. */
  writeNew(target: ResolvedPath, data: string | Uint8Array, signal?: AbortSignal): Promise<void>;
  /** Replace a file atomically (temp file + rename in the same folder). */
  replace(target: ResolvedPath, data: string | Uint8Array, signal?: AbortSignal): Promise<void>;
}
