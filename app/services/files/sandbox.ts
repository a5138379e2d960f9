/**
 * The files sandbox (DESIGN §5). Every file service reaches the disk only through this.
 *
 * Three layers: the text of the path is checked first (syntax.ts), then where it really lands
 * (locate.ts: realpath of the nearest existing ancestor, so symlinks cannot lead out), and finally
 * what is touched is reached by a walk from the root that follows no link (folder.ts), because
 * the disk may change between the check and the operation: a local process can swap a folder for
 * a link at any moment. Reads follow the same rules as writes.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { cryptoIds, type IdSource } from '../../ids.js';
import { ServiceFailure } from '../service.js';
import { formatBytes } from '../size.js';
import { isStrictlyInside, relativeInside } from './contain.js';
import { displayPath, quoteInput } from './display.js';
import { defaultHoldMode, FolderChanged, HeldFolder, type HoldMode } from './folder.js';
import { errorCode, locate, type Located } from './locate.js';
import {
  factsOf,
  listNames,
  openRegular,
  readUpTo,
  type EntryFacts,
  type OpenedFile,
} from './read.js';
import { parseUntrustedPath } from './syntax.js';
import { createNew, replaceExisting, TempNameTaken, throwIfAborted } from './write.js';

export { displayPath } from './display.js';
export type { EntryFacts, EntryKind } from './read.js';

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

export interface ReadResult {
  bytes: Buffer;
  facts: EntryFacts;
}

export interface HeadResult extends ReadResult {
  /** The file holds more than was read. */
  more: boolean;
}

export interface ListedEntry extends EntryFacts {
  name: string;
}

export interface Listing {
  entries: ListedEntry[];
  /** The folder had more entries than the cap; only the first ones (file-system order) are here. */
  truncated: boolean;
}

/** One entry met by `walk`, with its path relative to the root. */
export interface WalkedEntry extends ListedEntry {
  relative: string;
  /**
   * Up to `max` bytes from the start of this file (files only), read by the sandbox's rules.
   * Only during the visit: the folder is let go when the walk moves on.
   */
  readStart(max: number): Promise<HeadResult>;
}

export interface WalkOptions {
  /** Folders deeper than this below the start are not entered. */
  maxDepth: number;
  /** Entries read from one folder at most. */
  maxPerFolder: number;
  signal?: AbortSignal;
}

/** What the visitor answers: `stop` ends the walk at once. */
export type WalkStep = 'stop' | undefined | void;

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
}

/** The refusal for content above the size cap; shared with services that check before asking. */
export function fileTooLarge(name: string, bytes: number, max: number): ServiceFailure {
  return new ServiceFailure(
    'file_too_large',
    `${quoteInput(name)} would be ${formatBytes(bytes)} but files are limited to ${formatBytes(max)}; write less content or split it into several files`,
  );
}

/** The refusal for a file above a read cap. */
export function fileTooLargeToRead(name: string, bytes: number, max: number): ServiceFailure {
  return new ServiceFailure(
    'file_too_large',
    `${quoteInput(name)} is ${formatBytes(bytes)}, more than the ${formatBytes(max)} that can be read at once; it was not read`,
  );
}

// Collisions with another writer's temp name are retried with a fresh name, a few times.
const TEMP_ATTEMPTS = 4;

type Doing = 'written' | 'read';

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
  async function realRoot(root: string): Promise<{ real: string; found: boolean }> {
    const loc = await locate(root);
    if (!loc.ok || (loc.found && !loc.stats.isDirectory())) {
      throw invalid(
        `the allowed folder ${displayPath(root)} cannot be used (it is not a reachable folder); ask the user to fix it in Settings`,
      );
    }
    return { real: loc.real, found: loc.found };
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

  /** A walk stopped: what changed, said for the model, with nothing done. */
  function changed(err: FolderChanged, shown: string, root: string, doing: Doing): ServiceFailure {
    const q = quoteInput(shown);
    const part = quoteInput(err.at);
    const nothing = doing === 'written' ? 'nothing was written' : 'nothing was read';
    switch (err.reason) {
      case 'link':
        return new ServiceFailure(
          'path_outside_roots',
          `${q} now leads through a link (${part} was replaced by one) and links are not followed here; ${nothing}. Use a path inside ${rootsText([root])}`,
        );
      case 'moved':
        return new ServiceFailure(
          'path_outside_roots',
          `${q} changed while it was being ${doing} (a folder on the way was moved or replaced); ${nothing}. Try again or use another path`,
        );
      case 'not_folder':
        return invalid(`${part} on the way to ${q} is not a folder; ${nothing}`);
      case 'not_file':
        return invalid(`${q} is not a regular file; ${nothing}`);
      case 'missing':
        return invalid(
          `${q} does not exist (any more); ${nothing}. Call list_directory to see what is there`,
        );
    }
  }

  /**
   * Open the folder `absFolder` (a real location inside `root`) by a walk from the root that
   * follows no link, creating missing folders when `create`. The real location is computed now,
   * not at resolve time: the prompt may have waited a minute.
   */
  async function reach(
    root: string,
    absFolder: string,
    shown: string,
    create: boolean,
    doing: Doing,
  ): Promise<HeldFolder> {
    let rootReal = await realRoot(root);
    if (!rootReal.found && create) {
      // The root is the user's own choice: its missing ancestors are made as configured.
      await mkdir(rootReal.real, { recursive: true }).catch((err: unknown) => {
        throw mapFsError(err, shown, doing);
      });
      rootReal = await realRoot(root);
    }
    const loc = await locate(absFolder);
    if (!loc.ok) throw locateFailure(loc, shown, root);
    if (loc.found && !loc.stats.isDirectory()) {
      throw invalid(`the folder for ${quoteInput(shown)} is a file; choose another path`);
    }
    const rel = relativeInside(rootReal.real, loc.real);
    if (rel === undefined) throw outside(shown, [root], 'now leads through a link');
    if (!loc.found && !create) {
      throw invalid(`${quoteInput(shown)} does not exist (any more); call list_directory`);
    }
    let folder: HeldFolder;
    try {
      folder = await HeldFolder.openRoot(rootReal.real, await holdMode());
    } catch (err) {
      if (err instanceof FolderChanged) throw changed(err, shown, root, doing);
      throw mapFsError(err, shown, doing);
    }
    try {
      for (const part of rel === '' ? [] : rel.split(path.sep)) {
        const next = await folder.child(part, create);
        await folder.close();
        folder = next;
      }
      return folder;
    } catch (err) {
      await folder.close();
      if (err instanceof FolderChanged) throw changed(err, shown, root, doing);
      throw mapFsError(err, shown, doing);
    }
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
    const folder = await reach(
      root,
      path.dirname(target.absolute),
      target.relative,
      true,
      'written',
    );
    try {
      throwIfAborted(signal);
      const name = path.basename(target.absolute);
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

  /** Where an entry is now: the held folder that contains it and its name there. */
  async function reachEntry(entry: ResolvedEntry): Promise<{ folder: HeldFolder; name: string }> {
    const root = checkRoot(entry, false);
    const shown = entry.relative || '.';
    const loc = await locate(entry.absolute);
    if (!loc.ok) throw locateFailure(loc, shown, root);
    if (!loc.found) throw changed(new FolderChanged('missing', shown), shown, root, 'read');
    // The real location, so a link inside the root to another place inside it still works.
    const rootReal = await realRoot(root);
    const rel = relativeInside(rootReal.real, loc.real);
    if (rel === undefined) throw outside(shown, [root], 'now leads through a link');
    if (rel === '') return { folder: await reach(root, loc.real, shown, false, 'read'), name: '.' };
    const folder = await reach(root, path.dirname(loc.real), shown, false, 'read');
    return { folder, name: path.basename(loc.real) };
  }

  async function withFile<T>(
    entry: ResolvedEntry,
    use: (opened: OpenedFile) => Promise<T>,
  ): Promise<T> {
    const root = checkRoot(entry, true);
    const { folder, name } = await reachEntry(entry);
    try {
      const opened = await openRegular(folder, name);
      try {
        return await use(opened);
      } finally {
        await opened.handle.close().catch(() => undefined);
      }
    } catch (err) {
      if (err instanceof FolderChanged) throw changed(err, entry.relative, root, 'read');
      throw mapFsError(err, entry.relative, 'read');
    } finally {
      await folder.close();
    }
  }

  async function readFile(entry: ResolvedEntry, max: number, signal?: AbortSignal) {
    return withFile(entry, async ({ handle, facts }) => {
      if (facts.size > max) throw fileTooLargeToRead(entry.relative, facts.size, max);
      const { bytes, more } = await readUpTo(handle, max, signal);
      if (more) throw fileTooLargeToRead(entry.relative, Math.max(facts.size, max + 1), max);
      return { bytes, facts: { ...facts, size: bytes.byteLength } };
    });
  }

  async function readStart(entry: ResolvedEntry, max: number, signal?: AbortSignal) {
    return withFile(entry, async ({ handle, facts }) => {
      const { bytes, more } = await readUpTo(handle, max, signal);
      return { bytes, more, facts };
    });
  }

  async function info(entry: ResolvedEntry): Promise<EntryFacts> {
    const root = checkRoot(entry, false);
    const { folder, name } = await reachEntry(entry);
    try {
      const st = name === '.' ? undefined : await folder.entry(name);
      // The real location has no link in it; one there now was swapped in since.
      if (st?.isSymbolicLink()) throw new FolderChanged('link', name);
      const facts = st
        ? factsOf(st)
        : { kind: 'folder' as const, size: 0, modifiedMs: await folderTime(folder) };
      await folder.ensureIntact(name);
      return facts;
    } catch (err) {
      if (err instanceof FolderChanged) throw changed(err, entry.relative || '.', root, 'read');
      throw mapFsError(err, entry.relative || '.', 'read');
    } finally {
      await folder.close();
    }
  }

  async function holdFolder(entry: ResolvedEntry): Promise<HeldFolder | undefined> {
    const root = checkRoot(entry, false);
    const { folder, name } = await reachEntry(entry).catch((err: unknown) => {
      // The root itself may not exist yet: it is simply empty.
      if (entry.relative === '' && err instanceof ServiceFailure && err.code === 'path_invalid') {
        return { folder: undefined, name: '.' };
      }
      throw err;
    });
    if (!folder || name === '.') return folder;
    try {
      return await folder.child(name, false);
    } catch (err) {
      if (err instanceof FolderChanged) throw changed(err, entry.relative, root, 'read');
      throw mapFsError(err, entry.relative, 'read');
    } finally {
      await folder.close();
    }
  }

  async function list(entry: ResolvedEntry, max: number): Promise<Listing> {
    const folder = await holdFolder(entry);
    if (!folder) return { entries: [], truncated: false };
    try {
      return await describe(folder, max);
    } catch (err) {
      const root = checkRoot(entry, false);
      if (err instanceof FolderChanged) throw changed(err, entry.relative || '.', root, 'read');
      throw mapFsError(err, entry.relative || '.', 'read');
    } finally {
      await folder.close();
    }
  }

  async function walk(
    entry: ResolvedEntry,
    visit: (item: WalkedEntry) => Promise<WalkStep> | WalkStep,
    opts: WalkOptions,
  ): Promise<void> {
    const root = checkRoot(entry, false);
    const start = await holdFolder(entry);
    if (!start) return;
    // Depth-first with the folders on the way held open: at most maxDepth + 1 handles.
    const visitFolder = async (folder: HeldFolder, rel: string, depth: number) => {
      const { entries } = await describe(folder, opts.maxPerFolder);
      // By name, so a search answers in the same order on every platform and every run.
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const item of entries) {
        if (opts.signal?.aborted) return 'stop';
        const relative = rel === '' ? item.name : path.join(rel, item.name);
        const step = await visit({
          ...item,
          relative,
          readStart: (max) => readIn(folder, item.name, relative, root, max, opts.signal),
        });
        if (step === 'stop') return 'stop';
        if (item.kind === 'folder' && depth < opts.maxDepth) {
          let child: HeldFolder;
          try {
            child = await folder.child(item.name, false);
          } catch (err) {
            if (err instanceof FolderChanged) continue; // changed under us: skip, never follow
            throw err;
          }
          try {
            if ((await visitFolder(child, relative, depth + 1)) === 'stop') return 'stop';
          } finally {
            await child.close();
          }
        }
      }
      return undefined;
    };
    try {
      await visitFolder(start, entry.relative, 0);
    } catch (err) {
      if (err instanceof FolderChanged) throw changed(err, entry.relative || '.', root, 'read');
      throw mapFsError(err, entry.relative || '.', 'read');
    } finally {
      await start.close();
    }
  }

  async function readIn(
    folder: HeldFolder,
    name: string,
    relative: string,
    root: string,
    max: number,
    signal?: AbortSignal,
  ): Promise<HeadResult> {
    try {
      const { handle, facts } = await openRegular(folder, name);
      try {
        const { bytes, more } = await readUpTo(handle, max, signal);
        return { bytes, more, facts };
      } finally {
        await handle.close().catch(() => undefined);
      }
    } catch (err) {
      if (err instanceof FolderChanged) throw changed(err, relative, root, 'read');
      throw mapFsError(err, relative, 'read');
    }
  }

  return {
    roots: () => currentRoots(),
    maxFileBytes: () => options.maxFileBytes(),
    resolve,
    resolveEntry,
    writeNew: (target, data, signal) => write(target, data, createNew, signal),
    replace: (target, data, signal) => write(target, data, replaceExisting, signal),
    readFile,
    readStart,
    info,
    list,
    walk,
  };
}

/** Names with kinds and sizes, links described and never followed. */
async function describe(folder: HeldFolder, max: number): Promise<Listing> {
  const { names, truncated } = await listNames(folder, max);
  const entries: ListedEntry[] = [];
  for (const name of names) {
    const st = await folder.entry(name);
    if (st) entries.push({ name, ...factsOf(st) }); // vanished meanwhile: not listed
  }
  await folder.ensureIntact('.');
  return { entries, truncated };
}

async function folderTime(folder: HeldFolder): Promise<number> {
  const st = await folder.entry('.');
  return st ? Number(st.mtimeMs) : 0;
}

function mapFsError(err: unknown, shown: string, doing: Doing): Error {
  if (err instanceof ServiceFailure) return err;
  const where = quoteInput(shown);
  const code = errorCode(err);
  if ((err as { name?: string })?.name === 'AbortError') {
    return new ServiceFailure('cancelled', `reading ${where} was cancelled before it finished`);
  }
  const verb = doing === 'written' ? 'write' : 'read';
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
        `cannot ${verb} ${where}: permission denied (${code}); ask the user to check the folder's permissions`,
      );
    case 'ENOENT':
      return new ServiceFailure(
        'path_invalid',
        `${where} does not exist (any more); nothing was ${doing}. Call list_directory to see what is there`,
      );
    case 'ELOOP':
      return new ServiceFailure(
        'path_outside_roots',
        `${where} now leads through a link, and links are not followed here; nothing was ${doing}`,
      );
    case 'EISDIR':
    case 'ENOTDIR':
    case 'ENAMETOOLONG':
    case 'EINVAL':
      return new ServiceFailure(
        'path_invalid',
        `${where} cannot be ${doing} (${code}); choose another name`,
      );
    default:
      return err instanceof Error ? err : new Error(String(err));
  }
}
