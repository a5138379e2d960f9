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
import { FlushPace } from './flush-pace.js';

/** The part of a node FileHandle the append needs; a seam so tests can make the disk fail. */
export interface AppendHandle {
  stat(): Promise<{ size: number }>;
  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }>;
  write(buffer: Buffer, offset: number, length: number): Promise<{ bytesWritten: number }>;
  sync(): Promise<void>;
  truncate(len: number): Promise<void>;
  close(): Promise<void>;
}

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

export interface AuditIo {
  /** Opens `path` for reading and appending, creating it if missing (flags 'a+'). */
  openAppend(path: string): Promise<AppendHandle>;
  /** Opens the head file for writing in place, creating it if missing. */
  openHead(path: string): Promise<HeadHandle>;
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
 * an append's new size is metadata it flushes (what reading the data back needs), so it is as
 * durable as fsync for this file, without flushing timestamps.
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
      const fd = await openAsync(path, 'a+', 0o600);
      return new FdHandle(fd, (await fileInRam(path)) ? 'ram' : (diskPace ??= pace()));
    },
    openHead: async (path) =>
      new FdHandle(await openAsync(path, constants.O_RDWR | constants.O_CREAT, 0o600)),
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
 * Appends to the current month file through one handle kept open: it is opened (and the file's
 * size and last byte learnt) once, not per record, and reopened when the month changes, after a
 * failure and after `close()`. Not safe for concurrent use: the log sends one batch at a time.
 */
export class MonthWriter {
  private handle: AppendHandle | undefined;
  private path = '';
  private size = 0;
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
   * Appends `lines` (each ending in a newline) to `path` durably: one write of them all, then one
   * fsync. If the file does not end in a newline (a write torn by a crash), the data starts with
   * one, so the fragment stays a line of its own and never merges with a good record. If the write
   * fails, the file is cut back to its old size so no half record is left behind, and the handle
   * is closed; should the cut fail too, the leading newline of the next append still isolates the
   * fragment, since reopening learns the file's real end.
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
    const data = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, at - size);
    try {
      let written = 0;
      // One write call; the loop only covers the short writes a full disk can cause.
      while (written < data.length) {
        const { bytesWritten } = await handle.write(data, written, data.length - written);
        if (bytesWritten <= 0) throw new Error('the disk accepted no more bytes');
        written += bytesWritten;
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
    this.endsInNewline = data[data.length - 1] === 0x0a;
    if (this.fresh) {
      this.fresh = false;
      await this.io.syncDir(dirname(path)).catch(() => undefined);
    }
    return placed;
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    this.path = '';
    if (handle) await handle.close().catch(() => undefined);
  }

  /**
   * Cuts what a failed append left behind in its file (whichever month it was). If that fails
   * again while whole lines are left there, so does the append that called it (the gate then
   * refuses calls), rather than reuse the seqs of the records left there. A fragment with no
   * newline is harmless: the next append's leading newline keeps it a torn line of its own.
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
          if (await holdsNewline(handle, cutTo.size, size)) throw err;
          size = cutTo.size;
        }
        if (size > cutTo.size && (await holdsNewline(handle, cutTo.size, size)))
          throw new Error(`${cutTo.path} could not be cut back to ${cutTo.size} bytes`);
      }
    } finally {
      await handle.close().catch(() => undefined);
    }
    this.cutTo = undefined;
  }

  private async openAt(path: string): Promise<AppendHandle> {
    const handle = await this.io.openAppend(path);
    try {
      const { size } = await handle.stat();
      this.size = size;
      this.endsInNewline = size === 0 || (await lastByte(handle, size)) === 0x0a;
      this.fresh = size === 0;
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
    this.handle = handle;
    this.path = path;
    return handle;
  }
}

/**
 * Whether bytes `from`..`to` of the file hold a newline (a whole line). Bounded: what a failed
 * append leaves is at most one batch; an unreadable file counts as holding one.
 */
async function holdsNewline(handle: AppendHandle, from: number, to: number): Promise<boolean> {
  const buf = Buffer.alloc(Math.min(64 * 1024, Math.max(1, to - from)));
  try {
    for (let at = from; at < to;) {
      const { bytesRead } = await handle.read(buf, 0, Math.min(buf.length, to - at), at);
      if (bytesRead <= 0) return false;
      if (buf.subarray(0, bytesRead).includes(0x0a)) return true;
      at += bytesRead;
    }
    return false;
  } catch {
    return true;
  }
}

async function lastByte(handle: AppendHandle, size: number): Promise<number | undefined> {
  const buf = Buffer.alloc(1);
  const { bytesRead } = await handle.read(buf, 0, 1, size - 1);
  return bytesRead === 1 ? buf[0] : undefined;
}
