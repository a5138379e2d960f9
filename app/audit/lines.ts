import { close, closeSync, open, openSync, read, readSync } from 'node:fs';
import { open as openHandle } from 'node:fs/promises';
import { promisify } from 'node:util';
import { describeFsError } from './files.js';

/**
 * Reading month files by line, without holding them: a streaming scan for loading the index, and
 * reads of byte ranges for queries, whose lines the index locates.
 */

const SCAN_CHUNK = 1 << 20;
const EMPTY = Buffer.alloc(0);

/**
 * Calls `onLine` with every line of the file at `path` (the text between newlines, decoded as
 * UTF-8, the last one whether or not a newline ends it) with its byte offset and byte length.
 * Reads 1 MiB at a time; only a line longer than that makes the buffer grow.
 */
export async function scanLines(
  path: string,
  onLine: (text: string, offset: number, length: number) => void,
): Promise<void> {
  let handle;
  try {
    handle = await openHandle(path, 'r');
  } catch (err) {
    throw new Error(`audit log ${path} could not be read: ${describeFsError(err)}`, { cause: err });
  }
  try {
    let buf = Buffer.allocUnsafe(SCAN_CHUNK);
    let filled = 0;
    /** File offset of buf[0]. */
    let base = 0;
    for (;;) {
      if (filled === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, filled);
        buf = bigger;
      }
      const { bytesRead } = await handle.read(buf, filled, buf.length - filled, base + filled);
      if (bytesRead === 0) break;
      const searched = filled; // what is left of the last read holds no newline
      filled += bytesRead;
      const view = buf.subarray(0, filled);
      let start = 0;
      for (let nl = view.indexOf(0x0a, searched); nl !== -1; nl = view.indexOf(0x0a, start)) {
        onLine(buf.toString('utf8', start, nl), base + start, nl - start);
        start = nl + 1;
      }
      buf.copy(buf, 0, start, filled);
      base += start;
      filled -= start;
    }
    if (filled > 0) onLine(buf.toString('utf8', 0, filled), base, filled);
  } catch (err) {
    throw new Error(`audit log ${path} could not be read: ${describeFsError(err)}`, { cause: err });
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** A byte range of one month file (by the index's file number). */
export interface ReadRequest {
  file: number;
  position: number;
  length: number;
}

/**
 * A query as a generator: it yields the byte ranges it needs and is resumed with their bytes, so
 * the same query code runs with synchronous reads (`select`) and asynchronous ones (`query`). The
 * buffer handed back is only valid until the next yield.
 */
export type ReadPlan<T> = Generator<ReadRequest, T, Buffer>;

export function runSync<T>(plan: ReadPlan<T>, reader: MonthReader): T {
  try {
    let step = plan.next(EMPTY);
    while (!step.done) step = plan.next(reader.readSync(step.value));
    return step.value;
  } finally {
    plan.return(undefined as T);
    reader.closeSync();
  }
}

export async function runAsync<T>(plan: ReadPlan<T>, reader: MonthReader): Promise<T> {
  try {
    let step = plan.next(EMPTY);
    while (!step.done) step = plan.next(await reader.read(step.value));
    return step.value;
  } finally {
    plan.return(undefined as T);
    await reader.close();
  }
}

const openAsync = promisify(open);
const readAsync = promisify(read);
const closeAsync = promisify(close);

/**
 * Read access to the month files for one query: each file opened on first use and closed when the
 * query ends, and one scratch buffer reused for every read. A file that has gone (deleted or
 * archived by the user since the log opened) reads as empty, so its records drop out of results.
 */
export class MonthReader {
  private readonly fds = new Map<number, number | null>();
  private scratch: Buffer = EMPTY;

  constructor(private readonly paths: readonly string[]) {}

  readSync(req: ReadRequest): Buffer {
    let fd = this.fds.get(req.file);
    if (fd === undefined) {
      fd = this.openFileSync(req.file);
      this.fds.set(req.file, fd);
    }
    if (fd === null) return EMPTY;
    const buf = this.buffer(req.length);
    let got = 0;
    try {
      while (got < req.length) {
        const n = readSync(fd, buf, got, req.length - got, req.position + got);
        if (n === 0) break;
        got += n;
      }
    } catch (err) {
      throw this.readError(req.file, err);
    }
    return buf.subarray(0, got);
  }

  async read(req: ReadRequest): Promise<Buffer> {
    let fd = this.fds.get(req.file);
    if (fd === undefined) {
      fd = await this.openFile(req.file);
      this.fds.set(req.file, fd);
    }
    if (fd === null) return EMPTY;
    const buf = this.buffer(req.length);
    let got = 0;
    try {
      while (got < req.length) {
        const { bytesRead } = await readAsync(fd, buf, got, req.length - got, req.position + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
    } catch (err) {
      throw this.readError(req.file, err);
    }
    return buf.subarray(0, got);
  }

  closeSync(): void {
    for (const fd of this.fds.values()) if (fd !== null) closeSync(fd);
    this.fds.clear();
  }

  async close(): Promise<void> {
    const fds = [...this.fds.values()];
    this.fds.clear();
    await Promise.all(fds.map((fd) => (fd === null ? undefined : closeAsync(fd).catch(() => {}))));
  }

  private path(file: number): string {
    return this.paths[file] as string;
  }

  private buffer(length: number): Buffer {
    if (this.scratch.length < length) this.scratch = Buffer.allocUnsafe(length);
    return this.scratch;
  }

  private openFileSync(file: number): number | null {
    try {
      return openSync(this.path(file), 'r');
    } catch (err) {
      return this.missing(file, err);
    }
  }

  private async openFile(file: number): Promise<number | null> {
    try {
      return await openAsync(this.path(file), 'r');
    } catch (err) {
      return this.missing(file, err);
    }
  }

  /** A file that no longer exists reads as empty; any other failure is the query's error. */
  private missing(file: number, err: unknown): null {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw this.readError(file, err);
  }

  private readError(file: number, err: unknown): Error {
    return new Error(`audit log ${this.path(file)} could not be read: ${describeFsError(err)}`, {
      cause: err,
    });
  }
}
