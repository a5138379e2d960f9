import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditRecord } from '../contract/audit.js';

/**
 * The on-disk layout: one JSONL file per UTC month, `YYYY-MM.jsonl`, so file names sort in time
 * order and an old month can be archived or deleted by the user as a whole.
 */
const MONTH_FILE = /^(\d{4})-(\d{2})\.jsonl$/;

export function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

export function monthFileName(month: string): string {
  return `${month}.jsonl`;
}

/** Month file names in `dir`, oldest first; a missing directory has none. */
export async function listMonthFiles(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new Error(`audit log directory ${dir} could not be read: ${describeFsError(err)}`, {
      cause: err,
    });
  }
  return names.filter((n) => MONTH_FILE.test(n)).sort();
}

/**
 * A call's intent, written before its service runs (write-ahead): the call, its params and the
 * decision to run it, no outcome yet. The call's outcome record follows with `intentSeq` pointing
 * here and repeats every field, so readers show that one record per call and never the intent;
 * an intent with no outcome after a restart is a call interrupted by a crash.
 */
export type IntentRecord = Omit<
  AuditRecord,
  'outcome' | 'error' | 'message' | 'runMs' | 'durationMs' | 'intentSeq'
> & { phase: 'intent' };

/** What a line of a month file holds: a call's record, or the intent of one. */
export type StoredRecord = AuditRecord | IntentRecord;

export function isIntent(record: StoredRecord): record is IntentRecord {
  return (record as IntentRecord).phase === 'intent';
}

export interface MonthFile {
  name: string;
  path: string;
  records: StoredRecord[];
  /** Lines that are not a whole record: a write torn by a crash, or damage. Skipped, never fatal. */
  tornLines: number;
}

/**
 * What one line of a month file is. The same rule decides what is a record for loading (log.ts)
 * and for verifying (verify.ts), so the two always agree: a blank line is nothing, a line is a
 * record when it parses and has a record's shape, whether or not a newline follows it (a crash can
 * land just before the newline); anything else is torn.
 */
/** Whitespace and NULs alone: room past the log's end (append.ts ROOM_BYTES) or an empty line. */
const BLANK = /^[\s\0]*$/;

export function classifyLine(line: string): StoredRecord | 'blank' | 'torn' {
  if (BLANK.test(line)) return 'blank';
  return parseRecordLine(line) ?? 'torn';
}

/** Reads one month file whole (records in memory: for small files and tests). */
export async function readMonthFile(dir: string, name: string): Promise<MonthFile> {
  const path = join(dir, name);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`audit log ${path} could not be read: ${describeFsError(err)}`, { cause: err });
  }
  const records: StoredRecord[] = [];
  let tornLines = 0;
  for (const line of text.split('\n')) {
    const kind = classifyLine(line);
    if (kind === 'torn') tornLines += 1;
    else if (kind !== 'blank') records.push(kind);
  }
  return { name, path, records, tornLines };
}

export function parseRecordLine(line: string): StoredRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  return isAuditRecordShape(value) ? value : undefined;
}

const HASH = /^[0-9a-f]{64}$/;

/**
 * The fields the log, the query and the chain rely on. A record edited into another shape is
 * skipped like a torn line; the chain then breaks at the next record, so verify still reports it.
 */
export function isAuditRecordShape(v: unknown): v is StoredRecord {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const r = v as Record<string, unknown>;
  const intent = r.phase === 'intent';
  return (
    (r.phase === undefined || intent) &&
    (intent ? r.outcome === undefined : typeof r.outcome === 'string') &&
    (r.mac === undefined || (typeof r.mac === 'string' && HASH.test(r.mac))) &&
    Number.isSafeInteger(r.seq) &&
    (r.seq as number) >= 1 &&
    typeof r.ts === 'string' &&
    typeof r.connection === 'string' &&
    typeof r.callId === 'string' &&
    typeof r.service === 'string' &&
    typeof r.decision === 'string' &&
    typeof r.hash === 'string' &&
    HASH.test(r.hash) &&
    typeof r.prevHash === 'string' &&
    HASH.test(r.prevHash)
  );
}

const FS_ERRORS: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EISDIR: 'a directory is in the way of the file',
  ENOTDIR: 'part of the path is a file, not a directory',
  ENOENT: 'the directory does not exist',
  EIO: 'input/output error (failing disk?)',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in the system',
  EFBIG: 'file too large',
};

/** A plain-words reason for a file system error, for messages a user may read. */
export function describeFsError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code && FS_ERRORS[code]) return `${FS_ERRORS[code]} (${code})`;
  return err instanceof Error ? err.message : String(err);
}
