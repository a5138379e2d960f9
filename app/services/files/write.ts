import { constants } from 'node:fs';
import { link, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { ServiceFailure } from '../service.js';
import { FolderChanged, NO_FOLLOW, type FileId, type HeldFolder } from './folder.js';
import { errorCode } from './locate.js';

/**
 * Writing inside a held folder: the bytes go to a temp file in the same folder first, fsync'd,
 * and only then get the final name, so a crash (kill -9, power loss) never leaves a half-written
 * file under it. Every temp file is removed on every path the process survives.
 */

const CHUNK_BYTES = 1 << 20;
const CLEANUP_ATTEMPTS = 64;
const CREATE_EXCLUSIVE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW;

// link(2) fails with these where the file system has no hard links (FAT, exFAT, some shares).
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK', 'EXDEV']);

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new ServiceFailure(
      'cancelled',
      'the write was cancelled before it finished; the file was not changed',
    );
  }
}

/** The temp name was already taken (another writer drew the same name): draw another. */
export class TempNameTaken extends Error {
  constructor() {
    super('temp name taken');
    this.name = 'TempNameTaken';
  }
}

interface TempFile {
  handle: FileHandle;
  id: FileId;
  name: string;
}

/** A new temp file, verified to be in `folder` before a byte is written to it. */
async function createTemp(folder: HeldFolder, name: string, mode?: number): Promise<TempFile> {
  let handle: FileHandle;
  try {
    handle = await open(folder.at(name), CREATE_EXCLUSIVE, mode ?? 0o666);
  } catch (err) {
    if (errorCode(err) === 'EEXIST') throw new TempNameTaken();
    throw err;
  }
  let temp: TempFile | undefined;
  try {
    const st = await handle.stat({ bigint: true });
    temp = { handle, id: { dev: st.dev, ino: st.ino }, name };
    if (!(await folder.holds(name, temp.id))) throw new FolderChanged('moved', name);
    return temp;
  } catch (err) {
    if (temp) await removeTemp(folder, temp, 0);
    else await handle.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Remove our temp file until the handle says it is gone (its link count drops to what the final
 * name accounts for). The name is random and only ours, so removing it wherever the path leads now
 * can only remove our own file: in a `checked` folder that is how a temp file that landed outside
 * during a swap is taken back.
 */
async function removeTemp(folder: HeldFolder, temp: TempFile, keep: 0 | 1): Promise<void> {
  try {
    for (let attempt = 0; attempt < CLEANUP_ATTEMPTS; attempt++) {
      const st = await temp.handle.stat({ bigint: true });
      if (st.nlink <= BigInt(keep)) return;
      if (attempt > 0) await new Promise((resolve) => setImmediate(resolve));
      await unlink(attempt === 0 ? folder.at(temp.name) : folder.plainPath(temp.name)).catch(
        () => undefined,
      );
    }
  } catch {
    // The handle cannot be read: nothing more can be learnt about where the file is.
  } finally {
    await temp.handle.close().catch(() => undefined);
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
  await handle.sync();
  throwIfAborted(signal);
}

/**
 * Give the finished temp file the name `name`, failing with EEXIST if anything has that name:
 * link(2) is the portable "rename unless it exists" (the `wx` promise of create_file).
 */
async function publishNew(folder: HeldFolder, temp: TempFile, name: string): Promise<void> {
  try {
    await link(folder.at(temp.name), folder.at(name));
  } catch (err) {
    if (!NO_HARD_LINKS.has(errorCode(err) ?? '')) throw err;
    // No hard links here: claim the name with an empty file of our own (O_EXCL), then rename
    // over it. A crash in between leaves that empty file, never a partial one.
    const claim = await open(folder.at(name), CREATE_EXCLUSIVE, 0o600);
    await claim.close();
    await rename(folder.at(temp.name), folder.at(name));
  }
}

/** Create `name` in `folder` with `bytes`; EEXIST (raw) when the name is taken. */
export async function createNew(
  folder: HeldFolder,
  name: string,
  tempName: string,
  bytes: Uint8Array,
  signal?: AbortSignal,
): Promise<void> {
  const temp = await createTemp(folder, tempName);
  let keep: 0 | 1 = 0;
  try {
    await writeAll(temp.handle, bytes, signal);
    await publishNew(folder, temp, name);
    keep = 1;
    await landed(folder, temp, name);
    await folder.sync();
  } finally {
    await removeTemp(folder, temp, keep);
  }
}

/**
 * The final name holds our file. Only a `checked` folder can fail this (a swap between two
 * checks): then the content is taken back (the file emptied through our handle), so whatever the
 * name landed on outside holds none of the user's bytes, and the call is refused.
 */
async function landed(folder: HeldFolder, temp: TempFile, name: string): Promise<void> {
  if (await folder.holds(name, temp.id)) return;
  await temp.handle.truncate(0).catch(() => undefined);
  throw new FolderChanged('moved', name);
}

/** Replace `name` in `folder` atomically (rename over it), keeping its permissions. */
export async function replaceExisting(
  folder: HeldFolder,
  name: string,
  tempName: string,
  bytes: Uint8Array,
  signal?: AbortSignal,
): Promise<void> {
  const old = await folder.entry(name);
  // A private file stays private; a link being replaced gets ordinary file permissions.
  const mode = old?.isFile() ? Number(old.mode & 0o777n) : undefined;
  const temp = await createTemp(folder, tempName, mode);
  let keep: 0 | 1 = 0;
  try {
    await writeAll(temp.handle, bytes, signal);
    await folder.ensureIntact(name);
    await rename(folder.at(temp.name), folder.at(name));
    keep = 1;
    await landed(folder, temp, name);
    await folder.sync();
  } finally {
    await removeTemp(folder, temp, keep);
  }
}
