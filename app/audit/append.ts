import {
  close,
  constants,
  fdatasync,
  fdatasyncSync,
  fstat,
  ftruncate,
  open as openFd,
  read,
  writeSync,
} from 'node:fs';
import { open as fsOpen, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { writeFileAtomic } from '../settings/atomic.js';
import { classifyLine } from './files.js';
import { FlushPace } from './flush-pace.js';

/** The part of a node FileHandle the head file needs (writes in place, at a position). */
export interface HeadHandle {
  write(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesWritten: number }>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The part of a node FileHandle the append needs; a seam so tests can make the disk fail. A month
 * file is written in place too, over the room made ready past the log's end (ROOM_BYTES).
 */
export interface AppendHandle extends HeadHandle {
  stat(): Promise<{ size: number }>;
  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }>;
  truncate(len: number): Promise<void>;
}

export interface AuditIo {
  /**
   * Opens a month file `path` for reading and for writing at positions, creating it if missing.
   * Not in append mode: records are written over the room made ready past the log's end.
   */
  openAppend(path: string): Promise<AppendHandle>;
  /**
   * Opens the head file for writing in place. A missing one is first made whole with `first` (its
   * every slot): written beside it, flushed and renamed into place, so no reader ever finds a new
   * head file with one slot written and the other not yet, which it would have to call damaged.
   */
  openHead(path: string, first: string): Promise<HeadHandle>;
  /** Makes a new file's directory entry durable; best effort. */
  syncDir(dir: string): Promise<void>;
}

const openAsync = promisify(openFd);
const fstatAsync = promisify(fstat);
const readAsync = promisify(read);
const fdatasyncAsync = promisify(fdatasync);
const ftruncateAsync = promisify(ftruncate);
const closeAsync = promisify(close);

/**
 * A file by descriptor. Its write is a synchronous system call on purpose: writing a batch into
 * the page cache takes microseconds, less than the thread-pool round trip an asynchronous write
 * costs on every call. The fsync, which waits for the disk, is made as `flush` says: inline in RAM
 * (`ramFileSystem`, no disk to wait for), paced on a disk (inline while the disk proves quick,
 * flush-pace.ts), or always in the thread pool (the head file, off every call's path). fdatasync:
 * a new size is metadata it flushes (what reading the data back needs), so it is as durable as
 * fsync for this file, without flushing timestamps; a record written over the room made ready
 * (ROOM_BYTES) changes no size, so then it flushes the data alone.
 */
class FdHandle implements AppendHandle, HeadHandle {
  constructor(
    private readonly fd: number,
    private readonly flush: Flush = 'pool',
  ) {}

  async stat(): Promise<{ size: number }> {
    return { size: (await fstatAsync(this.fd)).size };
  }

  async read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }> {
    return { bytesRead: (await readAsync(this.fd, buffer, offset, length, position)).bytesRead };
  }

  write(
    buffer: Buffer,
    offset: number,
    length: number,
    position?: number,
  ): Promise<{ bytesWritten: number }> {
    try {
      return Promise.resolve({
        bytesWritten: writeSync(this.fd, buffer, offset, length, position ?? null),
      });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  sync(): Promise<void> {
    const flush = this.flush;
    if (flush === 'pool') return fdatasyncAsync(this.fd);
    if (flush === 'ram') return this.syncInline();
    const t0 = flush.started();
    if (!flush.inline()) return fdatasyncAsync(this.fd).then(() => flush.finished(t0, false));
    return this.syncInline().then(() => flush.finished(t0, true));
  }

  private syncInline(): Promise<void> {
    try {
      fdatasyncSync(this.fd);
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  truncate(len: number): Promise<void> {
    return ftruncateAsync(this.fd, len);
  }

  close(): Promise<void> {
    return closeAsync(this.fd);
  }
}

/** How a file's fsync is made: inline, in the thread pool, or as a FlushPace decides each time. */
type Flush = 'ram' | 'pool' | FlushPace;

/** Linux's f_type of the file systems that keep files in memory only (linux/magic.h). */
const RAM_FILE_SYSTEMS = new Set([0x01021994 /* tmpfs */, 0x858458f6 /* ramfs */]);

/**
 * Whether a file system of statfs type `type` keeps its files in RAM. There, fdatasync has no disk
 * to wait for and returns at once, so it is made inline: handing it to the thread pool would cost
 * a round trip between threads (tens of microseconds, more on a busy machine) to do nothing, on
 * every call. Anywhere else (a disk, or a type we do not know) it stays off the event loop.
 */
export function ramFileSystem(type: number, platform: NodeJS.Platform = process.platform): boolean {
  return platform === 'linux' && RAM_FILE_SYSTEMS.has(type);
}

async function inRam(path: string): Promise<boolean> {
  try {
    return ramFileSystem((await statfs(path)).type);
  } catch {
    return false;
  }
}

/**
 * File access through node's fs. `fileInRam` says whether a month file lives in RAM (its flush is
 * then made inline); tests pass their own to take either path on any machine. On a disk, one
 * FlushPace (`pace`) learns across month files how quick the disk's flushes are.
 */
export function createNodeIo(
  fileInRam: (path: string) => Promise<boolean> = inRam,
  pace: () => FlushPace = () => new FlushPace(),
): AuditIo {
  let diskPace: FlushPace | undefined;
  return {
    openAppend: async (path) => {
      const fd = await openAsync(path, constants.O_RDWR | constants.O_CREAT, 0o600);
      return new FdHandle(fd, (await fileInRam(path)) ? 'ram' : (diskPace ??= pace()));
    },
    openHead: async (path, first) => {
      try {
        return new FdHandle(await openAsync(path, constants.O_RDWR));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      await writeFileAtomic(path, first, { mode: 0o600 });
      // Not O_CREAT: a file gone again meanwhile fails this write (the next one tries again); it
      // is never made anew empty, which a reader would take for a damaged head.
      return new FdHandle(await openAsync(path, constants.O_RDWR));
    },
    syncDir: async (dir) => {
      const handle = await fsOpen(dir, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    },
  };
}

export const nodeIo: AuditIo = createNodeIo();

/** Where each appended line landed: its byte offset and byte length, newline excluded. */
export interface Placed {
  offsets: number[];
  lengths: number[];
}

/**
 * Room made ready past the log's end, as NUL bytes: records are written over it, so a record's
 * flush changes no file size and fdatasync has only the data to write, not a journal commit of the
 * new size as well (ext4 on the bench machine: 0.09 ms against 0.14 ms per flush, and the round
 * trip's code after it runs warmer). When a batch reaches past it, the next 1 MiB comes with that
 * batch's write and flush, best effort. `close()` cuts what is left, so only a crash leaves it.
 *
 * NUL, as a disk shows a lost sector: readers take a line of NULs alone as blank (`classifyLine`),
 * and a record next to NULs as torn. So whatever a power cut keeps of a batch written over the
 * room (a later record's sector, not an earlier one's), the record whose line lost bytes to NULs
 * stays torn and never stands as a record the chain would have to skip.
 */
export const ROOM_BYTES = 1 << 20;
let room: Buffer | undefined;

/**
 * Appends to the current month file through one handle kept open: it is opened (and where the
 * log ends in it learnt) once, not per record, and reopened when the month changes, after a
 * failure and after `close()`. Not safe for concurrent use: the log sends one batch at a time.
 */
export class MonthWriter {
  private handle: AppendHandle | undefined;
  private path = '';
  /** Where the log ends: the next record goes here. */
  private size = 0;
  /** The file's length: `size` and the room made ready after it (ROOM_BYTES). */
  private fileSize = 0;
  private endsInNewline = true;
  /** The file was empty when opened: its directory entry is made durable after the first write. */
  private fresh = false;
  /**
   * The size a file must be cut back to before anything more is appended to it: set when a failed
   * append could not be cut back (a failing disk that refuses the fsync and then the truncate).
   * Its whole records were never acknowledged and their seqs are used again by the next appends;
   * left in the file, they would break the chain for good.
   */
  private cutTo: { path: string; size: number } | undefined;

  constructor(private readonly io: AuditIo) {}

  /**
   * Appends `lines` (each ending in a newline) to `path` durably: one write of them all (with the
   * next room when they reach past it), then one fsync. If the log does not end in a newline (a
   * write torn by a crash), the data starts with one, so the fragment stays a line of its own and
   * never merges with a good record. If the write fails, the file is cut back to where the log
   * ended so no half record is left behind, and the handle is closed; should the cut fail too,
   * the leading newline of the next append still isolates the fragment, since reopening learns
   * where the log really ends.
   */
  async append(path: string, lines: readonly string[]): Promise<Placed> {
    if (path !== this.path) await this.close();
    if (this.cutTo) await this.cutBack(this.cutTo);
    const handle = this.handle ?? (await this.openAt(path));
    const size = this.size;
    const lead = size > 0 && !this.endsInNewline ? 1 : 0;
    const parts: Buffer[] = lead ? [Buffer.from('\n')] : [];
    const placed: Placed = { offsets: [], lengths: [] };
    let at = size + lead;
    for (const line of lines) {
      const bytes = Buffer.from(line, 'utf8');
      parts.push(bytes);
      placed.offsets.push(at);
      placed.lengths.push(bytes.length - 1);
      at += bytes.length;
    }
    let grows = at > this.fileSize;
    if (grows) parts.push((room ??= Buffer.alloc(ROOM_BYTES)));
    const total = at - size + (grows ? ROOM_BYTES : 0);
    const data = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, total);
    try {
      try {
        await writeAll(handle, data, size);
      } catch (err) {
        // A disk too full for the room (or a quota, a file size limit) may still take the
        // records: they go alone. A disk that fails them too fails the append below.
        if (!grows) throw err;
        grows = false;
        await handle.truncate(at);
        await writeAll(handle, data.subarray(0, at - size), size);
      }
      await handle.sync();
    } catch (err) {
      // Remembered before the cut is tried: whether it worked, the next open checks the size.
      this.cutTo = { path, size };
      await handle
        .truncate(size)
        .then(() => handle.sync())
        .catch(() => undefined);
      await this.close();
      throw err;
    }
    this.size = at;
    this.fileSize = grows ? at + ROOM_BYTES : Math.max(this.fileSize, at);
    this.endsInNewline = true;
    if (this.fresh) {
      this.fresh = false;
      await this.io.syncDir(dirname(path)).catch(() => undefined);
    }
    return placed;
  }

  /** Cuts the room left past the log's end (best effort: a reader passes over it anyway). */
  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    this.path = '';
    if (!handle) return;
    if (this.fileSize > this.size)
      await handle
        .truncate(this.size)
        .then(() => handle.sync())
        .catch(() => undefined);
    await handle.close().catch(() => undefined);
  }

  /**
   * Cuts what a failed append left behind in its file (whichever month it was). If that fails
   * again while whole records are left there, so does the append that called it (the gate then
   * refuses calls), rather than reuse the seqs of the records left there. A fragment is harmless:
   * reopening puts the next record after it, a torn line of its own.
   */
  private async cutBack(cutTo: { path: string; size: number }): Promise<void> {
    const handle = await this.io.openAppend(cutTo.path);
    try {
      let { size } = await handle.stat();
      if (size > cutTo.size) {
        try {
          await handle.truncate(cutTo.size);
          await handle.sync();
          size = (await handle.stat()).size;
        } catch (err) {
          if (await holdsRecord(handle, cutTo.size, size)) throw err;
          size = cutTo.size;
        }
        if (size > cutTo.size && (await holdsRecord(handle, cutTo.size, size)))
          throw new Error(`${cutTo.path} could not be cut back to ${cutTo.size} bytes`);
      }
    } finally {
      await handle.close().catch(() => undefined);
    }
    this.cutTo = undefined;
  }

  /**
   * Opens `path` and learns where its log ends: after its last byte that is neither NUL (room
   * left by a crash) nor a newline, and after the byte that follows it. A newline there ends the
   * line; a NUL there is kept, so a line the readers found torn (a record whose newline a crash
   * lost) stays torn and the next append begins a line of its own. What lies past is cut, so the
   * file holds only the log and the next append makes fresh room.
   */
  private async openAt(path: string): Promise<AppendHandle> {
    const handle = await this.io.openAppend(path);
    try {
      const { size: fileSize } = await handle.stat();
      const last = await lastContentByte(handle, fileSize);
      const follows = last + 1 < fileSize ? await byteAt(handle, last + 1) : undefined;
      this.endsInNewline = last < 0 || follows === 0x0a;
      this.size = last < 0 ? 0 : follows === undefined ? last + 1 : last + 2;
      // A file that cannot be cut keeps its room: the next records are written over it all the same.
      this.fileSize =
        fileSize > this.size
          ? await handle.truncate(this.size).then(
              () => this.size,
              () => fileSize,
            )
          : fileSize;
      this.fresh = fileSize === 0;
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
    this.handle = handle;
    this.path = path;
    return handle;
  }
}

/** Writes all of `data` at `position`: one write call; the loop only covers a full disk's short writes. */
async function writeAll(handle: AppendHandle, data: Buffer, position: number): Promise<void> {
  let written = 0;
  while (written < data.length) {
    const { bytesWritten } = await handle.write(
      data,
      written,
      data.length - written,
      position + written,
    );
    if (bytesWritten <= 0) throw new Error('the disk accepted no more bytes');
    written += bytesWritten;
  }
}

/** Past this many bytes, what a failed append left is not read through: it counts as holding a record. */
const LEFT_READ_LIMIT = 16 << 20;

/**
 * Whether bytes `from`..`to` of the file hold a whole record (one the next appends would repeat
 * the seq of), read as the log's readers read lines: the last one too, newline or not. A fragment
 * does not, nor does the room after it. Bounded: what a failed append leaves is at most one batch
 * and its room; more than that, or an unreadable file, counts as holding one.
 */
async function holdsRecord(handle: AppendHandle, from: number, to: number): Promise<boolean> {
  if (to - from > LEFT_READ_LIMIT) return true;
  const buf = Buffer.alloc(Math.max(1, to - from));
  try {
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await handle.read(buf, got, buf.length - got, from + got);
      if (bytesRead <= 0) break;
      got += bytesRead;
    }
    const lines = buf.toString('utf8', 0, got).split('\n');
    return lines.some((line) => typeof classifyLine(line) === 'object');
  } catch {
    return true;
  }
}

async function byteAt(handle: AppendHandle, at: number): Promise<number | undefined> {
  const buf = Buffer.alloc(1);
  const { bytesRead } = await handle.read(buf, 0, 1, at);
  return bytesRead === 1 ? buf[0] : undefined;
}

/** The position of the file's last byte that is neither a newline nor a NUL; -1 if none. */
async function lastContentByte(handle: AppendHandle, size: number): Promise<number> {
  const buf = Buffer.alloc(Math.min(64 * 1024, Math.max(1, size)));
  for (let to = size; to > 0;) {
    const from = Math.max(0, to - buf.length);
    const { bytesRead } = await handle.read(buf, 0, to - from, from);
    if (bytesRead <= 0) return to - 1; // unreadable: take it as content, never cut it
    for (let i = bytesRead - 1; i >= 0; i--) {
      const b = buf[i];
      if (b !== 0x0a && b !== 0x00) return from + i;
    }
    to = from;
  }
  return -1;
}
