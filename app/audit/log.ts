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
import { MAX_MESSAGE, MAX_NAME, cutName } from './bounds.js';
import { GENESIS_HASH, canonicalRecord, recordMac, type Unhashed } from './chain.js';
import {
  type IntentRecord,
  type StoredRecord,
  classifyLine,
  describeFsError,
  isIntent,
  listMonthFiles,
  monthFileName,
  monthOf,
  parseRecordLine,
} from './files.js';
import { HeadWriter, readHead } from './head.js';
import { MonthReader, runAsync, runSync, scanLines } from './lines.js';
import { RecordIndex, deepFreeze, hasPlainText } from './query.js';
import { canonicalJson, maskSecretsIn, redactParams, secretValues, sha256Hex } from './redact.js';
import type { SeqRange } from './chain-secret.js';
import { type UncheckedRange, verifyAudit } from './verify.js';

export interface AuditLogOptions {
  /** The directory holding the `YYYY-MM.jsonl` files; created if missing. */
  dir: string;
  /** Decides which month file a record goes to. */
  clock?: Pick<Clock, 'now'>;
  /** File access for appends; tests inject failures here. */
  io?: AuditIo;
  /**
   * The key of the chain's MACs (chain.ts), from the SecretStore. Without one, records carry no
   * MAC (and verify says the keyed check was not possible on a log that has them).
   */
  key?: string;
  /** From this seq on every record carries a MAC (the SecretStore says so: chain.ts). */
  keyedFrom?: number;
  /** The log held at least this seq once (the SecretStore says so: chain.ts); verify holds it to that. */
  knownSeq?: number;
  /** `key` was made just now: no record on disk can carry its MAC, so they begin with the next. */
  keyIsNew?: boolean;
  /**
   * Records no key vouches for, as the SecretStore keeps them (chain-secret.ts): found without the
   * MACs they should carry when the log was opened before. Verify names them, never passes them.
   */
  unchecked?: readonly SeqRange[];
  /**
   * A key is stored but cannot be read now (a locked keyring): the records this log writes carry
   * no MAC, and its verify says they were written so rather than calling them tampered with.
   */
  keyUnavailable?: boolean;
}

export interface AuditLogStats {
  /** Calls recorded: one per call (an intent and its outcome are one call). */
  records: number;
  files: number;
  /** Lines skipped on load because they are not whole records (a crash mid-write, or damage). */
  tornLines: number;
}

/** What the gate records ahead of running a service: the call and the decision, no outcome yet. */
export type IntentEntry = Omit<
  AuditEntry,
  'outcome' | 'error' | 'message' | 'runMs' | 'durationMs' | 'intentSeq'
>;

/** At most this many records, or about this many bytes, go into one write + fsync. */
const MAX_BATCH = 1000;
const MAX_BATCH_BYTES = 4 << 20;

/** An append waiting for its batch: the parts of the record that do not depend on the chain. */
interface Pending {
  entry: AuditEntry | IntentEntry;
  intent: boolean;
  params: unknown;
  paramsSha256: string;
  /** The outcome's error code and message, cut and with the params' secrets masked. */
  error?: string;
  message?: string;
  resolve: (record: StoredRecord) => void;
  reject: (err: unknown) => void;
}

interface Built {
  record: StoredRecord;
  line: string;
  pending: Pending;
}

/** An intent on disk whose outcome is not (yet): where it is, and its redacted params if known. */
interface OpenIntent {
  file: number;
  offset: number;
  length: number;
  params?: unknown;
  paramsSha256?: string;
}

/**
 * The append-only audit log (DESIGN §3). A class because the chain head, the write queue and the
 * index are state that must change together: a record is indexed, counted in the chain and
 * announced only once it is on disk.
 *
 * Write-ahead: a call that may change something or send data away is recorded twice, as an
 * intent before its service runs (`intent`) and as its outcome after (`append` with `intentSeq`).
 * The outcome record repeats the intent's fields, so it alone is the call's one row: the index,
 * queries, export, listeners and verify's count see outcome records (and the single records of
 * calls that never needed an intent) and never intents. An intent still without an outcome when
 * the log is next opened by the agent is recorded as `interrupted` (`recoverInterrupted`).
 *
 * Appends are committed in groups: while one write + fsync is in flight, the appends that arrive
 * wait, and then all go to disk in the next single write + fsync (the head file's write beside it,
 * head.ts). Each append's promise resolves only after the fsync that covers its line, so durability
 * is what it would be one at a time. Memory stays bounded however long the log: the index
 * (query.ts) keeps a few dozen bytes per record, and queries read records back from the files.
 */
export class AuditLog {
  private readonly index = new RecordIndex();
  private readonly events = new Emitter<{ append: AuditRecord }>();
  private readonly files = new Set<string>();
  private readonly writer: MonthWriter;
  private headWriter!: HeadWriter;
  private head: { seq: number; hash: string } = { seq: 0, hash: GENESIS_HASH };
  /** Intents whose outcome is not on disk, by seq: calls running now, or cut off by a crash. */
  private readonly openIntents = new Map<number, OpenIntent>();
  /** Intents found open when the log was opened: the previous run's interrupted calls. */
  private readonly interruptedAtOpen: number[] = [];
  /** The newest month written; never goes back, so a clock set back cannot reorder the files. */
  private month = '';
  private tornLines = 0;
  private pending: Pending[] = [];
  /** The loop writing batches, while there is anything to write. */
  private writing: Promise<void> | undefined;
  private closed = false;
  private monthCache: { from: number; to: number; month: string } | undefined;

  private keyedFromSeq: number | undefined;
  private knownSeq: number | undefined;
  private headDamagedAtSeq: number | undefined;
  private unchecked: readonly SeqRange[] = [];
  private macLessTail: SeqRange | undefined;
  /** The first seq this log writes without the key it should have (keyUnavailable). */
  private unkeyedFrom: number | undefined;

  /** The newest record's seq (0 for an empty log). */
  get lastSeq(): number {
    return this.head.seq;
  }

  /**
   * When the log was opened, a slot of its head file was damaged and the whole one said this seq:
   * records after it may have been cut off unseen (head.ts). Undefined when the head was whole.
   */
  get headDamagedAt(): number | undefined {
    return this.headDamagedAtSeq;
  }

  /**
   * Records at the end of the log, from where MACs are due, that carry none although the key is
   * here: written while the key could not be read, or their MACs removed. To be kept beside the
   * key (chain-secret.ts) and passed to `markUnchecked`: once a keyed record follows them, nothing
   * else would show them. A reader that keeps nothing leaves them to verify, which fails them.
   */
  get uncheckedAtOpen(): SeqRange | undefined {
    return this.macLessTail;
  }

  /** Records verify must name as unchecked (not as tampered with): kept beside the key. */
  markUnchecked(range: SeqRange): void {
    this.unchecked = [...this.unchecked, range];
  }

  /** The first seq under the key (undefined without one): to be kept beside the key. */
  get keyedFrom(): number | undefined {
    return this.keyedFromSeq;
  }

  private constructor(
    readonly dir: string,
    private readonly clock: Pick<Clock, 'now'>,
    private readonly io: AuditIo,
    private readonly key: string | undefined,
  ) {
    this.writer = new MonthWriter(io);
  }

  /** Opens (creating if needed) the log in `dir` and indexes its records. Writes nothing. */
  static async open(options: AuditLogOptions): Promise<AuditLog> {
    const io = options.io ?? nodeIo;
    const log = new AuditLog(options.dir, options.clock ?? systemClock, io, options.key);
    let firstMac: number | undefined;
    let lastMac = 0;
    try {
      // 0o700: the log names the user's files and contacts; other local users have no business there.
      await mkdir(options.dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new Error(
        `audit log directory ${options.dir} could not be created: ${describeFsError(err)}`,
        { cause: err },
      );
    }
    let last: StoredRecord | undefined;
    for (const name of await listMonthFiles(options.dir)) {
      const path = join(options.dir, name);
      const file = log.index.fileId(path);
      await scanLines(path, (text, offset, length) => {
        const kind = classifyLine(text);
        if (kind === 'torn') log.tornLines += 1;
        else if (kind !== 'blank') {
          last = kind;
          if (kind.mac !== undefined) {
            firstMac ??= kind.seq;
            lastMac = kind.seq;
          }
          if (isIntent(kind)) {
            log.openIntents.set(kind.seq, { file, offset, length });
            return;
          }
          if (kind.intentSeq !== undefined) log.openIntents.delete(kind.intentSeq);
          log.index.push(kind, file, offset, length, undefined);
        }
      });
      log.files.add(name);
      log.month = name.slice(0, 7);
    }
    log.interruptedAtOpen.push(...log.openIntents.keys());
    // The chain continues from the last whole record; verify() is what judges the history.
    if (last) log.head = { seq: last.seq, hash: last.hash };
    // A key met for the first time: its MACs start at the first record that has one, or at the
    // next record written (the caller stores this beside the key).
    log.knownSeq = options.knownSeq;
    if (options.key !== undefined)
      log.keyedFromSeq = options.keyIsNew
        ? log.head.seq + 1
        : (options.keyedFrom ?? firstMac ?? log.head.seq + 1);
    log.unchecked = options.unchecked ?? [];
    if (options.keyUnavailable) log.unkeyedFrom = log.head.seq + 1;
    if (log.keyedFromSeq !== undefined) {
      // Records up to the known seq were on disk when the agent last started or closed with its
      // key, so they had MACs then: without them now, they were stripped, and verify says so.
      const from = Math.max(lastMac + 1, log.keyedFromSeq, (options.knownSeq ?? 0) + 1);
      const known = log.unchecked.some((r) => r.from <= from && r.to >= log.head.seq);
      if (from <= log.head.seq && !known) log.macLessTail = { from, to: log.head.seq };
    }
    try {
      const read = await readHead(options.dir);
      // Kept for this log's lifetime: its first head write repairs the slot and erases the sign.
      if (read.damaged && read.head) log.headDamagedAtSeq = read.head.seq;
    } catch {
      // An unreadable head file: verify reads it again and says so.
    }
    log.headWriter = new HeadWriter(io, options.dir, options.key);
    return log;
  }

  /**
   * Records one call's final record: its outcome (after an `intent`, with `intentSeq`), or the
   * whole call in one record. Records take seq and chain in the order append was called. Rejects,
   * with the file and the reason, when the record could not be written; the log is then unchanged
   * and the next append chains as if it never happened.
   */
  append(entry: AuditEntry): Promise<AuditRecord> {
    return this.enqueue(entry, false) as Promise<AuditRecord>;
  }

  /**
   * Records a call's intent before its service runs. Resolves once the intent is on disk; the
   * service may run only then. Its outcome must follow as `append({...outcome, intentSeq})`.
   */
  intent(entry: IntentEntry): Promise<IntentRecord> {
    return this.enqueue(entry, true) as Promise<IntentRecord>;
  }

  /**
   * Records every call whose intent the previous run left without an outcome (it crashed or was
   * killed while the service ran) as `interrupted`, and returns those records. The agent calls it
   * once after opening, holding the data folder's lock; readers (the terminal) never do.
   */
  async recoverInterrupted(): Promise<AuditRecord[]> {
    const seqs = this.interruptedAtOpen.splice(0).filter((s) => this.openIntents.has(s));
    if (seqs.length === 0) return [];
    const reader = new MonthReader(this.index.paths);
    const intents: IntentRecord[] = [];
    try {
      for (const seq of seqs) {
        const at = this.openIntents.get(seq) as OpenIntent;
        const bytes = await reader.read({ file: at.file, position: at.offset, length: at.length });
        const record = parseRecordLine(bytes.toString('utf8'));
        if (record && isIntent(record) && record.seq === seq) intents.push(record);
      }
    } finally {
      await reader.close();
    }
    return Promise.all(
      intents.map((intent) => {
        const open = this.openIntents.get(intent.seq) as OpenIntent;
        open.params = intent.params;
        open.paramsSha256 = intent.paramsSha256;
        return this.append({
          ts: intent.ts,
          connection: intent.connection,
          ...(intent.connectionId !== undefined && { connectionId: intent.connectionId }),
          dialect: intent.dialect,
          callId: intent.callId,
          service: intent.service,
          params: undefined,
          decision: intent.decision,
          outcome: 'interrupted',
          message:
            'the agent stopped (a crash, a kill or a power loss) while this call was running; whether it finished is unknown',
          ...(intent.waitMs !== undefined && { waitMs: intent.waitMs }),
          durationMs: 0,
          intentSeq: intent.seq,
        });
      }),
    );
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

  /** Calls `listener` with each call's record once it is on disk (never intents). */
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

  /**
   * Checks the files on disk against the head file, the key when the log has one, and the newest
   * record this log wrote.
   */
  async verify(): Promise<AuditVerifyResult> {
    await this.flush();
    await this.headWriter.flush();
    return verifyAudit(this.dir, {
      key: this.key,
      keyedFrom: this.keyedFromSeq,
      atLeast: this.knownSeq,
      expected: this.head.seq > 0 ? this.head : undefined,
      headDamagedAt: this.headDamagedAtSeq,
      unchecked: this.uncheckedRanges(),
    });
  }

  /** Every range of records no key vouches for, each with why, for verify to name. */
  private uncheckedRanges(): UncheckedRange[] {
    const out: UncheckedRange[] = this.unchecked.map((r) => ({ ...r, why: 'macs-missing' }));
    if (this.unkeyedFrom !== undefined && this.head.seq >= this.unkeyedFrom)
      out.push({ from: this.unkeyedFrom, to: this.head.seq, why: 'key-unavailable' });
    return out;
  }

  /** Resolves when every append made so far has finished (written or failed). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** Refuses new appends, waits for the pending ones and closes the files. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    await this.writer.close();
    await this.headWriter.close();
  }

  private enqueue(entry: AuditEntry | IntentEntry, intent: boolean): Promise<StoredRecord> {
    if (this.closed) return Promise.reject(new Error(`audit log ${this.dir} is closed`));
    let params: unknown;
    let paramsSha256: string;
    let error: string | undefined;
    let message: string | undefined;
    try {
      checkEntry(entry, intent);
      const open =
        'intentSeq' in entry && entry.intentSeq !== undefined
          ? this.openIntents.get(entry.intentSeq)
          : undefined;
      if (open?.paramsSha256 !== undefined) {
        // The outcome of an intent written by this log: its params are already redacted and hashed.
        params = open.params;
        paramsSha256 = open.paramsSha256;
      } else {
        // Redacting and hashing the params needs no chain: done now, while a batch may be on its way.
        params = redactParams(entry.params);
        paramsSha256 = sha256Hex(canonicalJson(entry.params));
      }
      const e = entry as AuditEntry;
      if (!intent && (e.message !== undefined || e.error !== undefined)) {
        // A service's error text often echoes its input: what redaction masked in the params is
        // masked here too, before the text is cut (a cut could split a secret past recognition).
        const secrets = secretValues(entry.params);
        if (e.error !== undefined) error = cutName(maskSecretsIn(e.error, secrets));
        if (e.message !== undefined)
          message = cutName(maskSecretsIn(e.message, secrets), MAX_MESSAGE);
      }
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<StoredRecord>((resolve, reject) => {
      this.pending.push({
        entry,
        intent,
        params,
        paramsSha256,
        ...(error !== undefined && { error }),
        ...(message !== undefined && { message }),
        resolve,
        reject,
      });
      this.writing ??= this.writeAll();
    });
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
   * Takes the next batch off the queue and gives its records seq, prevHash, hash and MAC in
   * arrival order, continuing the chain from the head (which moves only once they are on disk).
   * The clock is read once for the batch: it decides the month file they all go to.
   */
  private takeBatch(): { month: string; built: Built[] } | undefined {
    const now = this.clock.now();
    const clockMonth = this.monthAt(now);
    const month = clockMonth > this.month ? clockMonth : this.month;
    const built: Built[] = [];
    let head = this.head;
    let bytes = 0;
    let taken = 0;
    while (taken < this.pending.length && built.length < MAX_BATCH && bytes < MAX_BATCH_BYTES) {
      const pending = this.pending[taken] as Pending;
      taken += 1;
      let record: StoredRecord;
      let line: string;
      try {
        const unhashed = build(pending, now, head);
        const hash = sha256Hex(canonicalRecord(unhashed));
        // Added in place, after every other field (as a reader finds them in the line).
        record = unhashed as StoredRecord;
        record.hash = hash;
        if (this.key !== undefined) record.mac = recordMac(this.key, hash);
        // Fields in the order a person reading the file expects (seq first), not the hash's.
        line = `${JSON.stringify(record)}\n`;
      } catch (err) {
        pending.reject(err);
        continue;
      }
      built.push({ record, line, pending });
      head = { seq: record.seq, hash: record.hash };
      bytes += line.length;
    }
    this.pending.splice(0, taken);
    return built.length > 0 ? { month, built } : undefined;
  }

  private lastPath = { name: '', path: '' };

  /** The month file's path, joined once per month rather than once per batch. */
  private monthPath(name: string): string {
    if (this.lastPath.name !== name) this.lastPath = { name, path: join(this.dir, name) };
    return this.lastPath.path;
  }

  /** The month of `ms`, remembered with its bounds: one Date per month, not one per batch. */
  private monthAt(ms: number): string {
    const known = this.monthCache;
    if (known && ms >= known.from && ms < known.to) return known.month;
    const d = new Date(ms);
    const from = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    const to = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    const month = Number.isNaN(from) ? monthOf(ms) : monthOf(from);
    if (!Number.isNaN(from)) this.monthCache = { from, to, month };
    return month;
  }

  private async commit(month: string, built: readonly Built[]): Promise<void> {
    const name = monthFileName(month);
    const path = this.monthPath(name);
    const last = (built[built.length - 1] as Built).record;
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
    // Only now, with the lines durable, so the head is never ahead of the log (head.ts).
    this.headWriter.note(last.seq, last.hash);
    this.head = { seq: last.seq, hash: last.hash };
    this.month = month;
    this.files.add(name);
    const file = this.index.fileId(path);
    built.forEach(({ record, pending }, k) => {
      const offset = placed.offsets[k] as number;
      const length = placed.lengths[k] as number;
      if (isIntent(record)) {
        this.openIntents.set(record.seq, {
          file,
          offset,
          length,
          params: pending.params,
          paramsSha256: pending.paramsSha256,
        });
        return;
      }
      if (record.intentSeq !== undefined) this.openIntents.delete(record.intentSeq);
      deepFreeze(record);
      this.index.push(record, file, offset, length, hasPlainText(record));
    });
    for (const { record, pending } of built) {
      if (!isIntent(record)) this.events.emit('append', record);
      pending.resolve(record);
    }
  }
}

/** A finite, non-negative number of milliseconds, or undefined. */
function ms(value: number | undefined): number | undefined {
  return value !== undefined && Number.isFinite(value) ? Math.max(0, value) : undefined;
}

/**
 * The record for `pending` as the next after `head`, exactly as a reader will parse it back.
 * Every name and text from the call is cut to its stated length here (bounds.ts).
 */
function build(pending: Pending, now: number, head: { seq: number; hash: string }): Unhashed {
  const { entry } = pending;
  const waitMs = ms(entry.waitMs);
  // Fields set one by one in the order of the line (no spreads of optional parts: this runs for
  // every record, and each spread is an object made and copied).
  const r: Record<string, unknown> = { seq: head.seq + 1, ts: normalizeTs(entry.ts, now) };
  if (pending.intent) r.phase = 'intent';
  r.connection = cutName(entry.connection);
  if (entry.connectionId !== undefined) r.connectionId = cutName(entry.connectionId);
  r.dialect = cutName(entry.dialect);
  r.callId = cutName(entry.callId);
  r.service = cutName(entry.service);
  r.params = pending.params;
  r.paramsSha256 = pending.paramsSha256;
  r.decision = entry.decision;
  if (pending.intent) {
    if (waitMs !== undefined) r.waitMs = waitMs;
  } else {
    const e = entry as AuditEntry;
    const runMs = ms(e.runMs);
    r.outcome = e.outcome;
    if (pending.error !== undefined) r.error = pending.error;
    if (pending.message !== undefined) r.message = pending.message;
    if (waitMs !== undefined) r.waitMs = waitMs;
    if (runMs !== undefined) r.runMs = runMs;
    r.durationMs = ms(e.durationMs) ?? 0;
    if (e.intentSeq !== undefined) r.intentSeq = e.intentSeq;
  }
  r.prevHash = head.hash;
  // Every value here is JSON already (strings, finite numbers, the redacted params, which are made
  // of JSON values only), so the object hashes exactly as a reader will parse it back from the line.
  return r as unknown as Unhashed;
}

function checkEntry(entry: AuditEntry | IntentEntry, intent: boolean): void {
  const bad = (what: string): never => {
    throw new TypeError(
      `audit entry for call ${JSON.stringify(cutName(String(entry.callId), MAX_NAME))}: ${what}`,
    );
  };
  for (const key of ['connection', 'callId', 'service', 'dialect'] as const) {
    if (typeof entry[key] !== 'string') bad(`${key} must be a string`);
  }
  if (entry.connectionId !== undefined && typeof entry.connectionId !== 'string')
    bad('connectionId must be a string');
  if (!DECISIONS.includes(entry.decision))
    bad(`unknown decision ${JSON.stringify(cutName(String(entry.decision)))}`);
  if (intent) return;
  const { outcome, intentSeq } = entry as AuditEntry;
  if (!OUTCOMES.includes(outcome))
    bad(`unknown outcome ${JSON.stringify(cutName(String(outcome)))}`);
  if (intentSeq !== undefined && !Number.isSafeInteger(intentSeq)) bad('intentSeq must be a seq');
}

const CANONICAL_TS =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/** The call's own time in canonical UTC form; the log's clock when the gate gave none usable. */
function normalizeTs(ts: string | undefined, now: number): string {
  // What the gate sends (toISOString) is canonical already: no parse and format again.
  if (typeof ts === 'string' && CANONICAL_TS.test(ts)) return ts;
  const t = typeof ts === 'string' ? Date.parse(ts) : Number.NaN;
  return new Date(Number.isNaN(t) ? now : t).toISOString();
}
