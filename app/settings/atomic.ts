import { constants } from 'node:fs';
import { chmod, copyFile, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { cryptoIds, type IdSource } from '../ids.js';

export interface AtomicWriteOptions {
  /** Mode of the written file; private by default because settings name the user's servers. */
  mode?: number;
  /** Mode of directories created on the way; existing ones are left as they are. */
  dirMode?: number;
  ids?: IdSource;
}

/**
 * Replace `file` with `data` so a reader (or a crash) sees either the old content or the new one,
 * never a torn mix: write a temp file in the same directory (rename is only atomic within one file
 * system), fsync it, rename it over the target, then fsync the directory so the rename survives a
 * power cut. The temp file is removed on any failure.
 */
export async function writeFileAtomic(
  file: string,
  data: string,
  { mode = 0o600, dirMode = 0o700, ids = cryptoIds }: AtomicWriteOptions = {},
): Promise<void> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true, mode: dirMode });
  const temp = path.join(dir, `.${path.basename(file)}.${ids.hex(12)}.tmp`);
  let renamed = false;
  try {
    // 'wx': never follow or clobber something already sitting at the temp name.
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(data, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
    renamed = true;
    await syncDir(dir);
  } finally {
    if (!renamed) await unlink(temp).catch(() => undefined);
  }
}

/** Best effort: Windows cannot open a directory for fsync, and the rename has already happened. */
async function syncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Durability of the rename is a bonus here, not a correctness requirement.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * Copy `file` to `<file>.<label>-<stamp>` beside it, never over an earlier copy (exclusive
 * create; `-1`, `-2`… when the stamp is taken), the copy readable only as `mode` allows. Returns
 * the copy's path.
 */
export async function copyBeside(
  file: string,
  label: string,
  epochMs: number,
  mode = 0o600,
): Promise<string> {
  const base = `${file}.${label}-${fileStamp(epochMs)}`;
  for (let n = 0; n < 100; n++) {
    const target = n === 0 ? base : `${base}-${n}`;
    try {
      await copyFile(file, target, constants.COPYFILE_EXCL);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw err;
    }
    await chmod(target, mode).catch(() => undefined);
    return target;
  }
  throw new Error(`too many copies (${label}) already exist beside ${file}`);
}

/**
 * Move a damaged file out of the way without ever losing it: copy it to `<file>.corrupt-<stamp>`
 * (copyBeside), then remove the original so the next start does not set it aside again.
 */
export async function keepAside(file: string, epochMs: number, mode = 0o600): Promise<string> {
  const target = await copyBeside(file, 'corrupt', epochMs, mode);
  // If this fails the next save replaces the file anyway, and the copy already exists.
  await unlink(file).catch(() => undefined);
  return target;
}

export function fileStamp(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/[:.]/g, '-');
}

export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

/**
 * The largest of the agent's own files it reads whole (settings, secrets, reminders: each a few
 * KB in use). A bigger one is damage, or another program's doing: it is set aside like a file that
 * does not parse, instead of being read into memory (past 512 MB, not even that: the read throws,
 * and the app would not start).
 */
export const MAX_OWN_FILE_BYTES = 4 * 1024 * 1024;

/** A file's text, or its size when that is past the bound (then nothing was read). */
export type BoundedText = { text: string } | { tooLarge: number };

/** The file's text, or its size when that is past `max` (then nothing is read). */
export async function readBoundedText(
  file: string,
  max = MAX_OWN_FILE_BYTES,
): Promise<BoundedText> {
  const { size } = await stat(file);
  if (size > max) return { tooLarge: size };
  const text = await readFile(file, 'utf8');
  // It may have grown between the two looks.
  return text.length > max ? { tooLarge: Buffer.byteLength(text) } : { text };
}
