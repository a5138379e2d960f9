/**
 * The files sandbox (DESIGN §5). Every file service reaches the disk only through this.
 *
 * Two layers: the text of the path is checked first (syntax.ts), then where it really lands
 * (locate.ts: realpath of the nearest existing ancestor, so symlinks cannot lead out). Writes
 * repeat the real-location check after creating folders, because the disk may have changed
 * between the permission prompt and the write.
 */
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, realpath, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { cryptoIds, type IdSource } from '../../ids.js';
import { ServiceFailure } from '../service.js';
import { formatBytes } from '../size.js';
import { isStrictlyInside, relativeInside } from './contain.js';
import { displayPath, quoteInput } from './display.js';
import { errorCode, locate, type Located } from './locate.js';
import { parseUntrustedPath } from './syntax.js';

export { displayPath } from './display.js';

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

export interface FilesSandboxOptions {
  /** Read on every call, so a settings change applies to the next call without a rebuild. */
  roots: () => readonly string[];
  maxFileBytes: () => number;
  /** Source of temp-file names. */
  ids?: IdSource;
}

/** The refusal for content above the size cap; shared with services that check before asking. */
export function fileTooLarge(name: string, bytes: number, max: number): ServiceFailure {
  return new ServiceFailure(
    'file_too_large',
    `${quoteInput(name)} would be ${formatBytes(bytes)} but files are limited to ${formatBytes(max)}; write less content or split it into several files`,
  );
}

const CHUNK_BYTES = 1 << 20;

export function createFilesSandbox(options: FilesSandboxOptions): FilesSandbox {
  const ids = options.ids ?? cryptoIds;

  // A relative root would depend on the process's working folder: ignore it (fail closed).
  const currentRoots = (): string[] =>
    options
      .roots()
      .filter((r) => typeof r === 'string' && r !== '' && path.isAbsolute(r))
      .map((r) => path.resolve(r));

  const rootsText = (roots: readonly string[]): string =>
    roots.map((r) => displayPath(r)).join(' or ');

  const outside = (input: string, roots: readonly string[], how = 'points'): ServiceFailure =>
    new ServiceFailure(
      'path_outside_roots',
      `${quoteInput(input)} ${how} outside the allowed folders; use a path inside ${rootsText(roots)}`,
    );

  const invalid = (message: string): ServiceFailure => new ServiceFailure('path_invalid', message);

  function locateFailure(loc: Exclude<Located, { ok: true }>, input: string, root: string) {
    const q = quoteInput(input);
    switch (loc.reason) {
      case 'dangling':
        return invalid(`${q} goes through a link that points nowhere; use another name`);
      case 'loop':
        return invalid(`${q} goes through a link that loops back on itself; use another name`);
      case 'not_folder': {
        const rel = relativeInside(root, loc.at);
        const where = rel ? quoteInput(rel) : displayPath(loc.at);
        return invalid(`${where} is a file, not a folder; choose another path for ${q}`);
      }
      case 'unreadable':
        return invalid(
          `${q} cannot be checked (a folder on the way is not readable); use another path`,
        );
    }
  }

  /** The root's real location; a root that does not exist yet is fine (created on first write). */
  async function realRoot(root: string): Promise<string> {
    const loc = await locate(root);
    if (!loc.ok || (loc.found && !loc.stats.isDirectory())) {
      throw invalid(
        `the allowed folder ${displayPath(root)} cannot be used (it is not a reachable folder); ask the user to fix it in Settings`,
      );
    }
    return loc.real;
  }

  async function resolve(input: unknown): Promise<ResolvedPath> {
    const roots = currentRoots();
    if (roots.length === 0) {
      throw new ServiceFailure(
        'path_outside_roots',
        'no folder is allowed for files yet; ask the user to add one in Settings',
      );
    }
    const parsed = parseUntrustedPath(input);
    const raw = parsed.path;
    const shown = input as string; // parseUntrustedPath proved it is a string
    let root: string | undefined;
    let absolute: string;
    if (parsed.absolute) {
      absolute = path.resolve(raw);
      root = roots.find((r) => relativeInside(r, absolute) !== undefined);
    } else {
      // Relative paths mean the first root; climbing out of it is an escape even if it lands in another.
      absolute = path.resolve(roots[0] as string, raw);
      root = relativeInside(roots[0] as string, absolute) !== undefined ? roots[0] : undefined;
    }
    if (root === undefined) throw outside(shown, roots);
    const relative = relativeInside(root, absolute) ?? '';
    if (relative === '') {
      throw invalid(
        `${quoteInput(shown)} is the allowed folder itself; add a file name such as 'notes/todo.txt'`,
      );
    }

    const loc = await locate(absolute);
    if (!loc.ok) throw locateFailure(loc, shown, root);
    const real = await realRoot(root);
    if (!isStrictlyInside(real, loc.real)) throw outside(shown, roots, 'leads through a link');
    if (loc.found) {
      if (loc.stats.isDirectory()) {
        throw invalid(
          `${quoteInput(shown)} is a folder; give a file name inside it, such as ${quoteInput(`${raw}/notes.txt`)}`,
        );
      }
      if (!loc.stats.isFile())
        throw invalid(`${quoteInput(shown)} is not a regular file; choose another name`);
    }
    return { root, relative, absolute, exists: loc.found };
  }

  /** The target must still be inside a current root: settings may have changed since resolve. */
  function checkTarget(target: ResolvedPath): string {
    const roots = currentRoots();
    const root = roots.find((r) => relativeInside(r, target.root) === '');
    if (
      root === undefined ||
      !path.isAbsolute(target.absolute) ||
      path.resolve(target.absolute) !== target.absolute ||
      !isStrictlyInside(root, target.absolute)
    ) {
      throw outside(displayPath(target.absolute), roots, 'is no longer');
    }
    return root;
  }

  /**
   * Create the target's folder one level at a time, checking after each mkdir that the real
   * location is still on the way to (or inside) the root. A recursive mkdir would follow a
   * symlink swapped in after resolve and build folders wherever it points.
   */
  async function ensureFolder(root: string, target: ResolvedPath): Promise<void> {
    const dir = path.dirname(target.absolute);
    const realRootPath = await realRoot(root);
    const onTheWay = (real: string): boolean =>
      relativeInside(realRootPath, real) !== undefined ||
      relativeInside(real, realRootPath) !== undefined;
    const escaped = () => outside(target.relative, [root], 'now leads through a link');

    const loc = await locate(dir);
    if (!loc.ok) throw locateFailure(loc, target.relative, root);
    if (loc.found && !loc.stats.isDirectory()) {
      throw invalid(`the folder for ${quoteInput(target.relative)} is a file; choose another path`);
    }
    if (relativeInside(realRootPath, loc.real) === undefined) throw escaped();

    let current = loc.existing;
    const missing = path.relative(loc.existing, dir).split(path.sep).filter(Boolean);
    for (const part of missing) {
      current = path.join(current, part);
      try {
        await mkdir(current);
      } catch (err) {
        if (errorCode(err) !== 'EEXIST') throw mapFsError(err, target);
      }
      let real: string;
      try {
        real = await realpath(current);
      } catch {
        throw escaped();
      }
      if (!onTheWay(real)) throw escaped();
      if (!(await stat(real)).isDirectory()) {
        throw invalid(
          `the folder for ${quoteInput(target.relative)} is a file; choose another path`,
        );
      }
    }
    let realDir: string;
    try {
      realDir = await realpath(dir);
    } catch {
      throw escaped();
    }
    if (relativeInside(realRootPath, realDir) === undefined) throw escaped();
  }

  function prepare(target: ResolvedPath, data: string | Uint8Array, signal?: AbortSignal) {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const max = options.maxFileBytes();
    if (bytes.byteLength > max) throw fileTooLarge(target.relative, bytes.byteLength, max);
    throwIfAborted(signal);
    return { bytes, root: checkTarget(target) };
  }

  async function writeNew(target: ResolvedPath, data: string | Uint8Array, signal?: AbortSignal) {
    const { bytes, root } = prepare(target, data, signal);
    await ensureFolder(root, target);
    throwIfAborted(signal);
    let handle: FileHandle;
    try {
      // 'wx' = O_CREAT|O_EXCL: never replaces a file and never follows a symlink at the target.
      handle = await open(target.absolute, 'wx');
    } catch (err) {
      throw mapFsError(err, target);
    }
    try {
      await writeAll(handle, bytes, signal);
      await handle.sync();
      await handle.close();
    } catch (err) {
      await handle.close().catch(() => undefined);
      // The file is ours (O_EXCL created it): a half-written one would only mislead.
      await rm(target.absolute, { force: true }).catch(() => undefined);
      throw mapFsError(err, target);
    }
  }

  async function replace(target: ResolvedPath, data: string | Uint8Array, signal?: AbortSignal) {
    const { bytes, root } = prepare(target, data, signal);
    await ensureFolder(root, target);
    throwIfAborted(signal);
    const dir = path.dirname(target.absolute);
    // Same folder, so rename stays on one file system and is atomic; a short fixed-length name so
    // a 255-byte target name cannot push the temp name over the limit.
    const temp = path.join(dir, `.advent-${ids.hex(16)}.tmp`);
    const mode = await fileMode(target.absolute);
    let handle: FileHandle | undefined;
    let created = false;
    try {
      handle = await open(temp, 'wx', mode);
      created = true;
      await writeAll(handle, bytes, signal);
      await handle.sync();
      await handle.close();
      handle = undefined;
      throwIfAborted(signal);
      await rename(temp, target.absolute);
    } catch (err) {
      await handle?.close().catch(() => undefined);
      if (created) await rm(temp, { force: true }).catch(() => undefined);
      throw mapFsError(err, target);
    }
    await syncFolder(dir);
  }

  return {
    roots: () => currentRoots(),
    maxFileBytes: () => options.maxFileBytes(),
    resolve,
    writeNew,
    replace,
  };
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new ServiceFailure(
      'cancelled',
      'the write was cancelled before it finished; the file was not changed',
    );
  }
}

async function writeAll(handle: FileHandle, bytes: Uint8Array, signal?: AbortSignal) {
  let offset = 0;
  while (offset < bytes.byteLength) {
    throwIfAborted(signal);
    const length = Math.min(CHUNK_BYTES, bytes.byteLength - offset);
    const { bytesWritten } = await handle.write(bytes, offset, length);
    if (bytesWritten <= 0) throw new Error('the disk accepted no bytes');
    offset += bytesWritten;
  }
  throwIfAborted(signal);
}

/** Keep the permissions of a file being replaced (a private file stays private). */
async function fileMode(abs: string): Promise<number | undefined> {
  try {
    const st = await stat(abs);
    return st.isFile() ? st.mode & 0o777 : undefined;
  } catch {
    return undefined;
  }
}

/** Make the rename itself durable. Best effort: Windows cannot open a folder for fsync. */
async function syncFolder(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // The data itself is already fsync'd; losing only the rename on power loss is acceptable.
  }
}

function mapFsError(err: unknown, target: ResolvedPath): Error {
  if (err instanceof ServiceFailure) return err;
  const where = quoteInput(target.relative);
  const code = errorCode(err);
  switch (code) {
    case 'EEXIST':
      return new ServiceFailure('file_exists', `${where} already exists; nothing was written`);
    case 'ENOSPC':
    case 'EDQUOT':
      return new ServiceFailure(
        'disk_full',
        `there is not enough disk space to write ${where}; nothing was written. Free some space or ask the user to choose another folder`,
      );
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new ServiceFailure(
        'service_error',
        `cannot write ${where}: permission denied (${code}); ask the user to check the folder's permissions`,
      );
    case 'EISDIR':
    case 'ENOTDIR':
    case 'ENAMETOOLONG':
    case 'EINVAL':
      return new ServiceFailure(
        'path_invalid',
        `${where} cannot be written (${code}); choose another name`,
      );
    default:
      return err instanceof Error ? err : new Error(String(err));
  }
}
