/**
 * The files sandbox (DESIGN §5). Every file service reaches the disk only through this.
 *
 * Three layers: the text of the path is checked first (syntax.ts), then where it really lands
 * (locate.ts: realpath of the nearest existing ancestor, so symlinks cannot lead out), and finally
 * what is touched is reached by a walk from the root that follows no link (folder.ts), because
 * the disk may change between the check and the operation: a local process can swap a folder for
 * a link at any moment. Reads follow the same rules as writes.
 */
import path from 'node:path';
import { cryptoIds, type IdSource } from '../../ids.js';
import { ServiceFailure } from '../service.js';
import { isStrictlyInside, relativeInside } from './contain.js';
import { displayPath, quoteInput } from './display.js';
import { defaultHoldMode, FolderChanged, type HoldMode } from './folder.js';
import { locate } from './locate.js';
import { reach, realRoot } from './reach.js';
import {
  facts,
  listFolder,
  readHead,
  readWhole,
  walkFolder,
  type HeadResult,
  type Listing,
  type ReadResult,
  type WalkedEntry,
  type WalkOptions,
  type WalkStep,
  type Where,
} from './browse.js';
import type { EntryFacts } from './read.js';
import {
  changed,
  fileTooLarge,
  invalid,
  locateFailure,
  mapFsError,
  outside,
  ownData,
} from './refusals.js';
import { parseUntrustedPath } from './syntax.js';
import { createNew, replaceExisting, TempNameTaken, throwIfAborted } from './write.js';

export { displayPath } from './display.js';
export { fileTooLarge, fileTooLargeToRead } from './refusals.js';
export type { EntryFacts, EntryKind } from './read.js';
export type {
  HeadResult,
  ListedEntry,
  Listing,
  ReadResult,
  WalkedEntry,
  WalkOptions,
  WalkStep,
} from './browse.js';

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

/** Something that exists inside a root: a file to read or a folder to list. */
export interface ResolvedEntry {
  root: string;
  /** Relative to the root ('' for the root itself), with the platform separator. */
  relative: string;
  absolute: string;
  kind: 'file' | 'folder';
}

export type EntryWanted = 'file' | 'folder' | 'any';

export interface FilesSandbox {
  roots(): readonly string[];
  maxFileBytes(): number;
  /**
   * Check an untrusted path for a file to write and resolve it inside an allowed root. Throws
   * ServiceFailure with `path_invalid` or `path_outside_roots` and a message the model can act on.
   */
  resolve(input: unknown): Promise<ResolvedPath>;
  /** Check an untrusted path naming something that exists (a file, a folder, or either). */
  resolveEntry(input: unknown, wanted: EntryWanted): Promise<ResolvedEntry>;
  /** Create a new file; `file_exists` if the name is taken. Never leaves a partial file under the name. */
  writeNew(target: ResolvedPath, data: string | Uint8Array, signal?: AbortSignal): Promise<void>;
  /** Replace a file atomically (temp file + rename in the same folder). */
  replace(target: ResolvedPath, data: string | Uint8Array, signal?: AbortSignal): Promise<void>;
  /** The whole file, or `file_too_large` (with its size and the cap) when it holds more than `max`. */
  readFile(entry: ResolvedEntry, max: number, signal?: AbortSignal): Promise<ReadResult>;
  /** Up to `max` bytes from the start of a file. */
  readStart(entry: ResolvedEntry, max: number, signal?: AbortSignal): Promise<HeadResult>;
  /** Kind, size and modified time, as the entry is now. */
  info(entry: ResolvedEntry): Promise<EntryFacts>;
  /** The entries of a folder (links described, never followed), at most `max`. */
  list(entry: ResolvedEntry, max: number): Promise<Listing>;
  /** Depth-first through a folder; links are listed as links and never entered. */
  walk(
    entry: ResolvedEntry,
    visit: (item: WalkedEntry) => Promise<WalkStep> | WalkStep,
    options: WalkOptions,
  ): Promise<void>;
}

export interface FilesSandboxOptions {
  /** Read on every call, so a settings change applies to the next call without a rebuild. */
  roots: () => readonly string[];
  maxFileBytes: () => number;
  /** Source of temp-file names. */
  ids?: IdSource;
  /** How folders are held (folder.ts); by default `anchored` where the platform allows. */
  holdMode?: HoldMode;
  /**
   * The agent's own folders (its settings, audit log, keys): never read, searched or written,
   * even when an allowed folder contains them (the home folder often does). A prompt-injected
   * server must not read the keys, rewrite the policies or edit the log it is recorded in.
   */
  protectedFolders?: () => readonly string[];
}

// Collisions with another writer's temp name are retried with a fresh name, a few times.
const TEMP_ATTEMPTS = 4;

export function createFilesSandbox(options: FilesSandboxOptions): FilesSandbox {
  const ids = options.ids ?? cryptoIds;
  const holdMode = (): Promise<HoldMode> =>
    options.holdMode ? Promise.resolve(options.holdMode) : defaultHoldMode();

  // A relative root would depend on the process's working folder: ignore it (fail closed).
  const currentRoots = (): string[] =>
    options
      .roots()
      .filter((r) => typeof r === 'string' && r !== '' && path.isAbsolute(r))
      .map((r) => path.resolve(r));

  /** Where the protected folders really are (a folder not made yet: where it would be). */
  async function protectedReal(): Promise<string[]> {
    const dirs = (options.protectedFolders?.() ?? []).filter((d) => path.isAbsolute(d));
    return Promise.all(
      dirs.map(async (d) => {
        const loc = await locate(path.resolve(d));
        return loc.ok ? loc.real : path.resolve(d);
      }),
    );
  }

  const inProtected = (real: string, folders: readonly string[]): boolean =>
    folders.some((p) => relativeInside(p, real) !== undefined);

  /** Refuses a path whose real location is in a protected folder. */
  async function guard(real: string, shown: string): Promise<void> {
    if (inProtected(real, await protectedReal())) throw ownData(shown);
  }

  /**
   * Where an operation under `root` runs. The protected folders are checked by reach.ts and the
   * walk against the real path they then reach link-free, at the moment of the operation.
   */
  async function whereUnder(root: string): Promise<Where> {
    const folders = await protectedReal();
    return {
      root,
      mode: await holdMode(),
      ...(folders.length > 0 && { offLimits: (real: string) => inProtected(real, folders) }),
    };
  }

  /** Absolute path and root for an untrusted path, by its text alone. */
  function place(input: unknown, folder: boolean) {
    const roots = currentRoots();
    if (roots.length === 0) {
      throw new ServiceFailure(
        'path_outside_roots',
        'no folder is allowed for files yet; ask the user to add one in Settings',
      );
    }
    const parsed = parseUntrustedPath(input, process.platform, { folder });
    const shown = input as string; // parseUntrustedPath proved it is a string
    let root: string | undefined;
    let absolute: string;
    if (parsed.absolute) {
      absolute = path.resolve(parsed.path);
      root = roots.find((r) => relativeInside(r, absolute) !== undefined);
    } else {
      // Relative paths mean the first root; climbing out of it is an escape even if it lands in another.
      absolute = path.resolve(roots[0] as string, parsed.path);
      root = relativeInside(roots[0] as string, absolute) !== undefined ? roots[0] : undefined;
    }
    if (root === undefined) throw outside(shown, roots);
    return { roots, root, absolute, shown, raw: parsed.path };
  }

  async function resolve(input: unknown): Promise<ResolvedPath> {
    const { roots, root, absolute, shown, raw } = place(input, false);
    const relative = relativeInside(root, absolute) ?? '';
    if (relative === '') {
      throw invalid(
        `${quoteInput(shown)} is the allowed folder itself; add a file name such as 'notes/todo.txt'`,
      );
    }

    const loc = await locate(absolute);
    if (!loc.ok) throw locateFailure(loc, shown, root);
    const real = (await realRoot(root)).real;
    if (!isStrictlyInside(real, loc.real)) throw outside(shown, roots, 'leads through a link');
    await guard(loc.real, shown);
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

  async function resolveEntry(input: unknown, wanted: EntryWanted): Promise<ResolvedEntry> {
    const { roots, root, absolute, shown } = place(input, wanted !== 'file');
    const relative = relativeInside(root, absolute) ?? '';
    const q = quoteInput(shown);
    if (relative === '' && wanted === 'file') {
      throw invalid(`${q} is the allowed folder itself; give the path of a file inside it`);
    }
    const loc = await locate(absolute);
    if (!loc.ok) throw locateFailure(loc, shown, root);
    const rootReal = await realRoot(root);
    if (relativeInside(rootReal.real, loc.real) === undefined) {
      throw outside(shown, roots, 'leads through a link');
    }
    await guard(loc.real, shown);
    if (!loc.found) {
      if (relative === '') return { root, relative, absolute, kind: 'folder' }; // not made yet: empty
      throw invalid(`${q} does not exist; call list_directory to see what is there`);
    }
    const kind = loc.stats.isDirectory() ? 'folder' : loc.stats.isFile() ? 'file' : undefined;
    if (kind === undefined) {
      throw invalid(
        `${q} is not a regular file or folder (a device, socket or pipe); it is not read`,
      );
    }
    if (wanted === 'file' && kind === 'folder') {
      throw invalid(`${q} is a folder; call list_directory to see the files in it`);
    }
    if (wanted === 'folder' && kind === 'file') {
      throw invalid(`${q} is a file, not a folder; call read_file or get_file_info for it`);
    }
    return { root, relative, absolute, kind };
  }

  /** The root of a target, which must still be a current root: settings may have changed. */
  function checkRoot(target: { root: string; absolute: string }, strict: boolean): string {
    const roots = currentRoots();
    const root = roots.find((r) => relativeInside(r, target.root) === '');
    const inside = root === undefined ? undefined : relativeInside(root, target.absolute);
    if (
      root === undefined ||
      !path.isAbsolute(target.absolute) ||
      path.resolve(target.absolute) !== target.absolute ||
      inside === undefined ||
      (strict && inside === '')
    ) {
      throw outside(displayPath(target.absolute), roots, 'is no longer');
    }
    return root;
  }

  function prepare(target: ResolvedPath, data: string | Uint8Array, signal?: AbortSignal) {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const max = options.maxFileBytes();
    if (bytes.byteLength > max) throw fileTooLarge(target.relative, bytes.byteLength, max);
    throwIfAborted(signal);
    return { bytes, root: checkRoot(target, true) };
  }

  type WriteOp = typeof createNew;

  async function write(
    target: ResolvedPath,
    data: string | Uint8Array,
    op: WriteOp,
    signal?: AbortSignal,
  ): Promise<void> {
    const { bytes, root } = prepare(target, data, signal);
    const at = await whereUnder(root);
    const dir = path.dirname(target.absolute);
    const folder = await reach(at, dir, target.relative, true, 'written');
    try {
      throwIfAborted(signal);
      const name = path.basename(target.absolute);
      if (at.offLimits?.(path.join(folder.path, name))) throw ownData(target.relative);
      for (let attempt = 1; ; attempt++) {
        // Same folder, so the final rename or link stays on one file system; a short fixed-length
        // name so a 255-byte target name cannot push the temp name over the limit.
        const temp = `.advent-${ids.hex(16)}.tmp`;
        try {
          await op(folder, name, temp, bytes, signal);
          return;
        } catch (err) {
          if (err instanceof TempNameTaken && attempt < TEMP_ATTEMPTS) continue;
          throw err;
        }
      }
    } catch (err) {
      if (err instanceof FolderChanged) throw changed(err, target.relative, root, 'written');
      throw mapFsError(err, target.relative, 'written');
    } finally {
      await folder.close();
    }
  }

  /** Where a read runs: the entry's root, still configured, and how folders are held. */
  function where(entry: ResolvedEntry, file: boolean): Promise<Where> {
    return whereUnder(checkRoot(entry, file));
  }

  return {
    roots: () => currentRoots(),
    maxFileBytes: () => options.maxFileBytes(),
    resolve,
    resolveEntry,
    writeNew: (target, data, signal) => write(target, data, createNew, signal),
    replace: (target, data, signal) => write(target, data, replaceExisting, signal),
    readFile: async (entry, max, signal) => readWhole(await where(entry, true), entry, max, signal),
    readStart: async (entry, max, signal) => readHead(await where(entry, true), entry, max, signal),
    info: async (entry) => facts(await where(entry, false), entry),
    list: async (entry, max) => listFolder(await where(entry, false), entry, max),
    walk: async (entry, visit, opts) => walkFolder(await where(entry, false), entry, visit, opts),
  };
}
