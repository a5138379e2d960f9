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
import { MonthWriter, nodeIo, type AuditIo, type Placed } from './append.js';
import { GENESIS_HASH, recordHash, type UnhashedRecord } from './chain.js';
import { classifyLine, describeFsError, listMonthFiles, monthFileName, monthOf } from './files.js';
import { MonthReader, runAsync, runSync, scanLines } from './lines.js';
import { RecordIndex, deepFreeze, hasPlainText } from './query.js';
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

/** At most this many records, or about this many bytes, go into one write + fsync. */
const MAX_BATCH = 1000;
const MAX_BATCH_BYTES = 4 << 20;

/** An append waiting for its batch: the parts of the record that do not depend on the chain. */
interface Pending {
  entry: AuditEntry;
  params: unknown;
  paramsSha256: string;
  resolve: (record: AuditRecord) => void;
  reject: (err: unknown) => void;
}

interface Built {
  record: AuditRecord;
  line: string;
  pending: Pending;
}

/**
 * The append-only audit log (DESIGN §3). A class because the chain head, the write queue and the
 * index are state that must change together: a record is indexed, counted in the chain and
 * announced only once it is on disk.
 *
 * Appends are committed in groups: while one write + fsync is in flight, the appends that arrive
 * wait, and then all go to disk in the next single write + fsync. Each append's promise resolves
 * only after the fsync that covers its line, so durability is what it would be one at a time.
 * Memory stays bounded however long the log: the index (query.ts) keeps a few dozen bytes per
 * record, and queries read records back from the files.
 */
export class AuditLog {
  private readonly index = new RecordIndex();
  private readonly events = new Emitter<{ append: AuditRecord }>();
  private readonly files = new Set<string>();
  private readonly writer: MonthWriter;
  private head: { seq: number; hash: string } = { seq: 0, hash: GENESIS_HASH };
  /** The newest month written; never goes back, so a clock set back cannot reorder the files. */
  private month = '';
  private tornLines = 0;
  private pending: Pending[] = [];
  /** The loop writing batches, while there is anything to write. */
  private writing: Promise<void> | undefined;
  private closed = false;

  private constructor(
    readonly dir: string,
    private readonly clock: Pick<Clock, 'now'>,
    io: AuditIo,
  ) {
    this.writer = new MonthWriter(io);
  }

  /** Opens (creating if needed) the log in `dir` and indexes its records. */
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
    let last: AuditRecord | undefined;
    for (const name of await listMonthFiles(options.dir)) {
      const path = join(options.dir, name);
      const file = log.index.fileId(path);
      await scanLines(path, (text, offset, length) => {
        const kind = classifyLine(text);
        if (kind === 'torn') log.tornLines += 1;
        else if (kind !== 'blank') {
          log.index.push(kind, file, offset, length, undefined);
          last = kind;
        }
      });
      log.files.add(name);
      log.month = name.slice(0, 7);
    }
    // The chain continues from the last whole record; verify() is what judges the history.
    if (last) log.head = { seq: last.seq, hash: last.hash };
    return log;
  }

  /**
   * Records one call. Records take seq and chain in the order append was called. Rejects, with
   * the file and the reason, when the record could not be written; the log is then unchanged and
   * the next append chains as if it never happened.
   */
  append(entry: AuditEntry): Promise<AuditRecord> {
    if (this.closed) return Promise.reject(new Error(`audit log ${this.dir} is closed`));
    let params: unknown;
    let paramsSha256: string;
    try {
      checkEntry(entry);
      // Redacting and hashing the params needs no chain: done now, while a batch may be on its way.
      params = redactParams(entry.params);
      paramsSha256 = sha256Hex(canonicalJson(entry.params));
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<AuditRecord>((resolve, reject) => {
      this.pending.push({ entry, params, paramsSha256, resolve, reject });
      this.writing ??= this.writeAll();
    });
  }

  /** One page of the records matching `q` (the page's records are read from the month files). */
  async query(q: AuditQuery = {}): Promise<AuditPage> {
    return runAsync(this.index.page(q), new MonthReader(this.index.paths));
  }

  /** Every record matching `q`, without paging (for export), read without blocking. */
  async selectAsync(q: AuditQuery = {}): Promise<AuditRecord[]> {
    return runAsync(this.index.select(q), new MonthReader(this.index.paths));
  }

  /**
   * Every record matching `q`, without paging. Reads the month files synchronously, blocking the
   * event loop for as long as that takes: prefer `selectAsync`.
   */
  select(q: AuditQuery = {}): AuditRecord[] {
    return runSync(this.index.select(q), new MonthReader(this.index.paths));
  }

  /** Calls `listener` with each record once it is on disk; returns the unsubscribe function. */
  onAppend(listener: (record: AuditRecord) => void): () => void {
    return this.events.on('append', listener);
  }

  stats(): AuditLogStats {
    return { records: this.index.size, files: this.files.size, tornLines: this.tornLines };
  }

  /**
   * Bytes of memory the log holds for its records: the index, plus the bounded cache of recent
   * records (estimated). Grows by a few dozen bytes per record, never by the records themselves.
   */
  memoryBytes(): number {
    return this.index.memoryBytes();
  }

  /** Checks the files on disk, and that they still reach the newest record this log wrote. */
  async verify(): Promise<AuditVerifyResult> {
    await this.flush();
    return verifyAudit(this.dir, this.head.seq > 0 ? this.head : undefined);
  }

  /** Resolves when every append made so far has finished (written or failed). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** Refuses new appends, waits for the pending ones and closes the file. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    await this.writer.close();
  }

  /** Writes batches until nothing is pending. */
  private async writeAll(): Promise<void> {
    // Appends made in the same tick as the first one join its batch.
    await Promise.resolve();
    try {
      while (this.pending.length > 0) {
        const batch = this.takeBatch();
        if (!batch) continue;
        try {
          await this.commit(batch.month, batch.built);
        } catch (err) {
          // Not a write failure (commit handles those): never leave an append waiting forever.
          for (const { pending } of batch.built) pending.reject(err);
        }
      }
    } finally {
      this.writing = undefined;
    }
  }

  /**
   * Takes the next batch off the queue and gives its records seq, prevHash and hash in arrival
   * order, continuing the chain from the head (which moves only once they are on disk). The clock
   * is read once for the batch: it decides the month file they all go to.
   */
  private takeBatch(): { month: string; built: Built[] } | undefined {
    const now = this.clock.now();
    const clockMonth = monthOf(now);
    const month = clockMonth > this.month ? clockMonth : this.month;
    const built: Built[] = [];
    let head = this.head;
    let bytes = 0;
    let taken = 0;
    while (taken < this.pending.length && built.length < MAX_BATCH && bytes < MAX_BATCH_BYTES) {
      const pending = this.pending[taken] as Pending;
      taken += 1;
      let record: AuditRecord;
      try {
        const unhashed = build(pending, now, head);
        record = { ...unhashed, hash: recordHash(unhashed) };
      } catch (err) {
        pending.reject(err);
        continue;
      }
      const line = `${JSON.stringify(record)}\n`;
      built.push({ record, line, pending });
      head = { seq: record.seq, hash: record.hash };
      bytes += line.length;
    }
    this.pending.splice(0, taken);
    return built.length > 0 ? { month, built } : undefined;
  }

  private async commit(month: string, built: readonly Built[]): Promise<void> {
    const name = monthFileName(month);
    const path = join(this.dir, name);
    let placed: Placed;
    try {
      placed = await this.writer.append(
        path,
        built.map((b) => b.line),
      );
    } catch (err) {
      for (const { pending } of built) {
        pending.reject(
          new Error(`audit log could not be written to ${path}: ${describeFsError(err)}`, {
            cause: err,
          }),
        );
      }
      return;
    }
    const last = (built[built.length - 1] as Built).record;
    this.head = { seq: last.seq, hash: last.hash };
    this.month = month;
    this.files.add(name);
    const file = this.index.fileId(path);
    built.forEach(({ record }, k) => {
      deepFreeze(record);
      this.index.push(
        record,
        file,
        placed.offsets[k] as number,
        placed.lengths[k] as number,
        hasPlainText(record), // the line is JSON.stringify(record): this log wrote it
      );
    });
    for (const { record, pending } of built) {
      this.events.emit('append', record);
      pending.resolve(record);
    }
  }
}

/** The record for `pending` as the next after `head`, exactly as a reader will parse it back. */
function build(pending: Pending, now: number, head: { seq: number; hash: string }): UnhashedRecord {
  const { entry } = pending;
  const record: UnhashedRecord = {
    seq: head.seq + 1,
    ts: normalizeTs(entry.ts, now),
    connection: entry.connection,
    ...(entry.connectionId !== undefined && { connectionId: entry.connectionId }),
    dialect: entry.dialect,
    callId: entry.callId,
    service: entry.service,
    params: pending.params,
    paramsSha256: pending.paramsSha256,
    decision: entry.decision,
    outcome: entry.outcome,
    ...(entry.error !== undefined && { error: entry.error }),
    ...(entry.message !== undefined && { message: entry.message }),
    durationMs: Number.isFinite(entry.durationMs) ? Math.max(0, entry.durationMs) : 0,
    prevHash: head.hash,
  };
  // Hash exactly what a reader will parse back from the line, so verify recomputes the same.
  return JSON.parse(JSON.stringify(record)) as UnhashedRecord;
}

function checkEntry(entry: AuditEntry): void {
  const bad = (what: string): never => {
    throw new TypeError(`audit entry for call ${JSON.stringify(entry.callId)}: ${what}`);
  };
  for (const key of ['connection', 'callId', 'service', 'dialect'] as const) {
    if (typeof entry[key] !== 'string') bad(`${key} must be a string`);
  }
  if (entry.connectionId !== undefined && typeof entry.connectionId !== 'string')
    bad('connectionId must be a string');
  if (!DECISIONS.includes(entry.decision))
    bad(`unknown decision ${JSON.stringify(entry.decision)}`);
  if (!OUTCOMES.includes(entry.outcome)) bad(`unknown outcome ${JSON.stringify(entry.outcome)}`);
}

/** The call's own time in canonical UTC form; the log's clock when the gate gave none usable. */
function normalizeTs(ts: string | undefined, now: number): string {
  const t = ts ? Date.parse(ts) : Number.NaN;
  return new Date(Number.isNaN(t) ? now : t).toISOString();
}
