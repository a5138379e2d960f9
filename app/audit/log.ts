import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import {
  DECISIONS,
  OUTCOMES,
  type AuditEntry,
  type AuditPage,
  type AuditQuery,
  type AuditRecord,
  type AuditVerifyResult,
} from '../contract/audit.js';
import { Emitter } from '../events.js';
import { appendLine, nodeIo, type AuditIo } from './append.js';
import { GENESIS_HASH, recordHash, type UnhashedRecord } from './chain.js';
import { describeFsError, listMonthFiles, monthFileName, monthOf, readMonthFile } from './files.js';
import { RecordIndex } from './query.js';
import { canonicalJson, redactParams, sha256Hex } from './redact.js';
import { verifyAudit } from './verify.js';

export interface AuditLogOptions {
  /** The directory holding the `YYYY-MM.jsonl` files; created if missing. */
  dir: string;
  /** Decides which month file a record goes to. */
  clock?: Pick<Clock, 'now'>;
  /** File access for appends; tests inject failures here. */
  io?: AuditIo;
}

export interface AuditLogStats {
  records: number;
  files: number;
  /** Lines skipped on load because they are not whole records (a crash mid-write, or damage). */
  tornLines: number;
}

/**
 * The append-only audit log (DESIGN §3). A class because the chain head, the write queue and the
 * in-memory records are state that must change together: a record is in memory, counted in the
 * chain and announced only once it is on disk.
 */
export class AuditLog {
  private readonly index = new RecordIndex();
  private readonly events = new Emitter<{ append: AuditRecord }>();
  private readonly files = new Set<string>();
  private head: { seq: number; hash: string } = { seq: 0, hash: GENESIS_HASH };
  /** The newest month written; never goes back, so a clock set back cannot reorder the files. */
  private month = '';
  private tornLines = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    readonly dir: string,
    private readonly clock: Pick<Clock, 'now'>,
    private readonly io: AuditIo,
  ) {}

  /** Opens (creating if needed) the log in `dir` and loads its records into memory. */
  static async open(options: AuditLogOptions): Promise<AuditLog> {
    const log = new AuditLog(options.dir, options.clock ?? systemClock, options.io ?? nodeIo);
    try {
      // 0o700: the log names the user's files and contacts; other local users have no business there.
      await mkdir(options.dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new Error(
        `audit log directory ${options.dir} could not be created: ${describeFsError(err)}`,
        { cause: err },
      );
    }
    for (const name of await listMonthFiles(options.dir)) {
      const file = await readMonthFile(options.dir, name);
      log.files.add(name);
      log.month = name.slice(0, 7);
      log.tornLines += file.tornLines;
      for (const record of file.records) log.index.push(record);
    }
    const last = log.index.last();
    // The chain continues from the last whole record; verify() is what judges the history.
    if (last) log.head = { seq: last.seq, hash: last.hash };
    return log;
  }

  /**
   * Records one call. Appends run one at a time in call order, so seq and the chain follow the
   * order the calls were made in. Rejects, with the file and the reason, when the record could
   * not be written; the log is then unchanged and the next append chains as if it never happened.
   */
  append(entry: AuditEntry): Promise<AuditRecord> {
    if (this.closed) return Promise.reject(new Error(`audit log ${this.dir} is closed`));
    const run = this.queue.then(() => this.write(entry));
    this.queue = run.catch(() => undefined);
    return run;
  }

  async query(q: AuditQuery = {}): Promise<AuditPage> {
    return this.index.page(q);
  }

  /** Every record matching `q`, without paging (for export). */
  select(q: AuditQuery = {}): AuditRecord[] {
    return this.index.select(q);
  }

  /** Calls `listener` with each record once it is on disk; returns the unsubscribe function. */
  onAppend(listener: (record: AuditRecord) => void): () => void {
    return this.events.on('append', listener);
  }

  stats(): AuditLogStats {
    return { records: this.index.size, files: this.files.size, tornLines: this.tornLines };
  }

  /** Checks the files on disk, and that they still reach the newest record this log wrote. */
  async verify(): Promise<AuditVerifyResult> {
    await this.flush();
    return verifyAudit(this.dir, this.head.seq > 0 ? this.head : undefined);
  }

  /** Resolves when every append made so far has finished (written or failed). */
  async flush(): Promise<void> {
    let pending: Promise<unknown>;
    do {
      pending = this.queue;
      await pending;
    } while (pending !== this.queue);
  }

  /** Refuses new appends and waits for the pending ones. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private async write(entry: AuditEntry): Promise<AuditRecord> {
    const now = this.clock.now();
    const unhashed = this.build(entry, now);
    const record: AuditRecord = { ...unhashed, hash: recordHash(unhashed) };
    const clockMonth = monthOf(now);
    const month = clockMonth > this.month ? clockMonth : this.month;
    const name = monthFileName(month);
    const path = join(this.dir, name);
    try {
      await appendLine(path, `${JSON.stringify(record)}\n`, this.io);
    } catch (err) {
      throw new Error(`audit log could not be written to ${path}: ${describeFsError(err)}`, {
        cause: err,
      });
    }
    this.head = { seq: record.seq, hash: record.hash };
    this.month = month;
    this.files.add(name);
    this.index.push(record);
    this.events.emit('append', record);
    return record;
  }

  private build(entry: AuditEntry, now: number): UnhashedRecord {
    checkEntry(entry);
    const record: UnhashedRecord = {
      seq: this.head.seq + 1,
      ts: normalizeTs(entry.ts, now),
      connection: entry.connection,
      dialect: entry.dialect,
      callId: entry.callId,
      service: entry.service,
      params: redactParams(entry.params),
      paramsSha256: sha256Hex(canonicalJson(entry.params)),
      decision: entry.decision,
      outcome: entry.outcome,
      ...(entry.error !== undefined && { error: entry.error }),
      ...(entry.message !== undefined && { message: entry.message }),
      durationMs: Number.isFinite(entry.durationMs) ? Math.max(0, entry.durationMs) : 0,
      prevHash: this.head.hash,
    };
    // Hash exactly what a reader will parse back from the line, so verify recomputes the same.
    return JSON.parse(JSON.stringify(record)) as UnhashedRecord;
  }
}

function checkEntry(entry: AuditEntry): void {
  const bad = (what: string): never => {
    throw new TypeError(`audit entry for call ${JSON.stringify(entry.callId)}: ${what}`);
  };
  for (const key of ['connection', 'callId', 'service', 'dialect'] as const) {
    if (typeof entry[key] !== 'string') bad(`${key} must be a string`);
  }
  if (!DECISIONS.includes(entry.decision))
    bad(`unknown decision ${JSON.stringify(entry.decision)}`);
  if (!OUTCOMES.includes(entry.outcome)) bad(`unknown outcome ${JSON.stringify(entry.outcome)}`);
}

/** The call's own time in canonical UTC form; the log's clock when the gate gave none usable. */
function normalizeTs(ts: string | undefined, now: number): string {
  const t = ts ? Date.parse(ts) : Number.NaN;
  return new Date(Number.isNaN(t) ? now : t).toISOString();
}
