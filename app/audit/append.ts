import { open as fsOpen } from 'node:fs/promises';
import { dirname } from 'node:path';

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

export interface AuditIo {
  /** Opens `path` for reading and appending, creating it if missing (flags 'a+'). */
  openAppend(path: string): Promise<AppendHandle>;
  /** Makes a new file's directory entry durable; best effort. */
  syncDir(dir: string): Promise<void>;
}

export const nodeIo: AuditIo = {
  openAppend: (path) => fsOpen(path, 'a+', 0o600),
  syncDir: async (dir) => {
    const handle = await fsOpen(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
};

/**
 * Appends one line durably: a single write of the whole line, then fsync. If the file does not
 * end in a newline (a write torn by a crash), the line starts with one, so the fragment stays a
 * line of its own and never merges with a good record. If the write fails, the file is cut back
 * to its old size so no half record is left behind; should that fail too, the next append's
 * leading newline still isolates the fragment.
 */
export async function appendLine(path: string, line: string, io: AuditIo = nodeIo): Promise<void> {
  const handle = await io.openAppend(path);
  try {
    const { size } = await handle.stat();
    const lead = size > 0 && (await lastByte(handle, size)) !== 0x0a ? '\n' : '';
    const data = Buffer.from(lead + line, 'utf8');
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
      await handle
        .truncate(size)
        .then(() => handle.sync())
        .catch(() => undefined);
      throw err;
    }
    if (size === 0) await io.syncDir(dirname(path)).catch(() => undefined);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

async function lastByte(handle: AppendHandle, size: number): Promise<number | undefined> {
  const buf = Buffer.alloc(1);
  const { bytesRead } = await handle.read(buf, 0, 1, size - 1);
  return bytesRead === 1 ? buf[0] : undefined;
}
