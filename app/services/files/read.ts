import { constants, type BigIntStats } from 'node:fs';
import { open, opendir, type FileHandle } from 'node:fs/promises';
import { FolderChanged, NO_FOLLOW, O_NONBLOCK, type HeldFolder } from './folder.js';
import { errorCode } from './locate.js';

/**
 * Reading inside a held folder, by the same rules as writing (DESIGN §5): the name is opened with
 * no link followed, the handle's identity is checked against the folder's entry, and the size cap
 * is applied to what is really read, not to what a stat said a moment before.
 */

export type EntryKind = 'file' | 'folder' | 'link' | 'other';

export interface EntryFacts {
  kind: EntryKind;
  /** Bytes, for files. */
  size: number;
  modifiedMs: number;
}

export function factsOf(st: BigIntStats): EntryFacts {
  const kind: EntryKind = st.isSymbolicLink()
    ? 'link'
    : st.isDirectory()
      ? 'folder'
      : st.isFile()
        ? 'file'
        : 'other';
  return { kind, size: kind === 'file' ? Number(st.size) : 0, modifiedMs: Number(st.mtimeMs) };
}

export interface OpenedFile {
  handle: FileHandle;
  facts: EntryFacts;
}

/**
 * Open the regular file `name` for reading. A link, a folder, a device or a FIFO is refused
 * before it is opened (opening some devices has effects, a FIFO would block).
 */
export async function openRegular(folder: HeldFolder, name: string): Promise<OpenedFile> {
  const before = await folder.entry(name);
  if (!before) throw new FolderChanged('missing', name);
  if (before.isSymbolicLink()) throw new FolderChanged('link', name);
  if (!before.isFile()) throw new FolderChanged('not_file', name);
  let handle: FileHandle;
  try {
    handle = await open(folder.at(name), constants.O_RDONLY | NO_FOLLOW | O_NONBLOCK);
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ELOOP') throw new FolderChanged('link', name);
    if (code === 'ENOENT') throw new FolderChanged('missing', name);
    throw err;
  }
  try {
    const st = await handle.stat({ bigint: true });
    // Swapped between the look and the open: it is not what was checked.
    if (!st.isFile() || st.dev !== before.dev || st.ino !== before.ino) {
      throw new FolderChanged('moved', name);
    }
    if (!(await folder.holds(name, st))) throw new FolderChanged('moved', name);
    return { handle, facts: factsOf(st) };
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Up to `max` bytes from the start of the file; `more` tells whether the file holds more (read,
 * not stat'd: a file growing while it is read cannot push past the cap). The buffer starts at the
 * size the file had when opened and grows only as bytes really arrive, so a large cap costs
 * nothing for a small file.
 */
export async function readUpTo(
  handle: FileHandle,
  max: number,
  sizeHint: number,
  signal?: AbortSignal,
): Promise<{ bytes: Buffer; more: boolean }> {
  const limit = max + 1;
  let buffer = Buffer.alloc(Math.min(limit, Math.max(sizeHint + 1, 4096)));
  let filled = 0;
  for (;;) {
    signal?.throwIfAborted();
    if (filled === buffer.length) {
      if (buffer.length === limit) break;
      const grown = Buffer.alloc(Math.min(limit, buffer.length * 2));
      buffer.copy(grown, 0, 0, filled);
      buffer = grown;
    }
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return { bytes: buffer.subarray(0, Math.min(filled, max)), more: filled > max };
}

export interface ListedNames {
  names: string[];
  /** The folder had more entries than were read. */
  truncated: boolean;
}

/** Up to `max` names of the folder's entries (in the order the file system gives them). */
export async function listNames(folder: HeldFolder, max: number): Promise<ListedNames> {
  const names: string[] = [];
  const dir = await opendir(folder.at('.'), { bufferSize: 64 });
  let truncated = false;
  try {
    for (;;) {
      const entry = await dir.read();
      if (entry === null) break;
      if (names.length >= max) {
        truncated = true;
        break;
      }
      names.push(entry.name);
    }
  } finally {
    await dir.close().catch(() => undefined);
  }
  await folder.ensureIntact('.');
  return { names, truncated };
}
