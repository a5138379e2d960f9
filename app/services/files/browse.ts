import path from 'node:path';
import type { HeldFolder } from './folder.js';
import { FolderChanged } from './folder.js';
import { reachEntry, reachFolder, type Where } from './reach.js';
import {
  factsOf,
  listNames,
  openRegular,
  readUpTo,
  type EntryFacts,
  type OpenedFile,
} from './read.js';
import { changed, fileTooLargeToRead, mapFsError } from './refusals.js';

/**
 * The sandbox's read side (DESIGN §5: reads follow the same rules as writes): whole files and
 * their starts, facts, folder listings and walks, each reached by reach.ts and opened by read.ts,
 * each refusal saying that nothing was read.
 */

export type { Where } from './reach.js';

/** An entry resolved inside the root: relative ('' = the root) and absolute paths. */
export interface EntryPath {
  relative: string;
  absolute: string;
}

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

/** What the visitor answers: `stop` ends the walk at once; `skip` passes over a folder unentered. */
export type WalkStep = 'stop' | 'skip' | undefined | void;

async function withFile<T>(
  where: Where,
  entry: EntryPath,
  use: (opened: OpenedFile) => Promise<T>,
): Promise<T> {
  const { root } = where;
  const { folder, name } = await reachEntry(where, entry);
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

/** The whole file, or `file_too_large` (with its size and the cap) when it holds more than `max`. */
export async function readWhole(
  where: Where,
  entry: EntryPath,
  max: number,
  signal?: AbortSignal,
): Promise<ReadResult> {
  return withFile(where, entry, async ({ handle, facts }) => {
    if (facts.size > max) throw fileTooLargeToRead(entry.relative, facts.size, max);
    const { bytes, more } = await readUpTo(handle, max, facts.size, signal);
    if (more) throw fileTooLargeToRead(entry.relative, Math.max(facts.size, max + 1), max);
    return { bytes, facts: { ...facts, size: bytes.byteLength } };
  });
}

/** Up to `max` bytes from the start of a file. */
export async function readHead(
  where: Where,
  entry: EntryPath,
  max: number,
  signal?: AbortSignal,
): Promise<HeadResult> {
  return withFile(where, entry, async ({ handle, facts }) => {
    const { bytes, more } = await readUpTo(handle, max, facts.size, signal);
    return { bytes, more, facts };
  });
}

/** Kind, size and modified time, as the entry is now. */
export async function facts(where: Where, entry: EntryPath): Promise<EntryFacts> {
  const { root } = where;
  const { folder, name } = await reachEntry(where, entry);
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

/** The entries of a folder (links described, never followed), at most `max`. */
export async function listFolder(where: Where, entry: EntryPath, max: number): Promise<Listing> {
  const { root } = where;
  const folder = await reachFolder(where, entry);
  if (!folder) return { entries: [], truncated: false };
  try {
    return await describe(folder, max);
  } catch (err) {
    if (err instanceof FolderChanged) throw changed(err, entry.relative || '.', root, 'read');
    throw mapFsError(err, entry.relative || '.', 'read');
  } finally {
    await folder.close();
  }
}

/**
 * Depth-first through a folder; links are listed as links and never entered. What is off limits
 * is passed over as if it were not there, judged by the real path walked (the start may be a link
 * inside the root, so the path the caller named is not where the walk is).
 */
export async function walkFolder(
  where: Where,
  entry: EntryPath,
  visit: (item: WalkedEntry) => Promise<WalkStep> | WalkStep,
  opts: WalkOptions,
): Promise<void> {
  const { root, offLimits } = where;
  const start = await reachFolder(where, entry);
  if (!start) return;
  // Depth-first with the folders on the way held open: at most maxDepth + 1 handles.
  const visitFolder = async (folder: HeldFolder, rel: string, depth: number) => {
    const { entries } = await describe(folder, opts.maxPerFolder);
    // By name, so a search answers in the same order on every platform and every run.
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const item of entries) {
      if (opts.signal?.aborted) return 'stop';
      if (offLimits?.(path.join(folder.path, item.name))) continue;
      const relative = rel === '' ? item.name : path.join(rel, item.name);
      const step = await visit({
        ...item,
        relative,
        readStart: (max) => readIn(folder, item.name, relative, root, max, opts.signal),
      });
      if (step === 'stop') return 'stop';
      if (step === 'skip') continue;
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
      const { bytes, more } = await readUpTo(handle, max, facts.size, signal);
      return { bytes, more, facts };
    } finally {
      await handle.close().catch(() => undefined);
    }
  } catch (err) {
    if (err instanceof FolderChanged) throw changed(err, relative, root, 'read');
    throw mapFsError(err, relative, 'read');
  }
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
