/** The audit record (DESIGN §3). Shared by the core, which writes it, and the UI, which reads it. */
export const DECISIONS = [
  'auto',
  'allowed-once',
  'allowed-session',
  'allowed-always',
  'denied',
  'timeout',
  'disabled',
  'invalid',
  'user-run',
  /** The same call arrived again (robot servers send each execute twice); not run twice. */
  'duplicate',
  /**
   * The server stopped waiting for the call (it cancelled it, or its connection ended) before the
   * user decided: the question was taken back and nothing ran.
   */
  'withdrawn',
] as const;
export type Decision = (typeof DECISIONS)[number];

export const OUTCOMES = ['ok', 'error', 'refused', 'interrupted', 'cancelled'] as const;
/**
 * ok: the service ran and succeeded; error: it ran and failed; refused: it never ran;
 * cancelled: the server withdrew the call (or its connection ended) and no answer was sent — it
 * never ran, or it was stopped while running;
 * interrupted: its intent was recorded and it was let run, but the agent stopped (a crash, a kill,
 * a power loss) before its outcome was recorded, so whether it finished is unknown.
 */
export type Outcome = (typeof OUTCOMES)[number];

/**
 * Who spoke to the gate: each connection kind's dialect, `mcp` for MCP clients of the agent's own
 * server, `local` for the user. Records written before the endpoint got one name say
 * `xiaozhi-endpoint`; readers accept it.
 */
export const DIALECTS = ['advent', 'xiaozhi', 'endpoint', 'robot', 'mcp', 'local'] as const;
/** The dialects the app ships, or another kind's own name (a kind added beside them). */
export type Dialect = (typeof DIALECTS)[number] | (string & {});

export interface AuditRecord {
  seq: number;
  /** ISO 8601 UTC time the call arrived. */
  ts: string;
  /** The connection's display name when the call came. */
  connection: string;
  /** The connection's profile id (absent in records written before ids were recorded). */
  connectionId?: string;
  dialect: Dialect;
  callId: string;
  service: string;
  /** Redacted copy of the params (long strings cut, secret-looking keys masked). */
  params: unknown;
  /** sha256 (hex) of the canonical JSON of the full, unredacted params. */
  paramsSha256: string;
  decision: Decision;
  outcome: Outcome;
  /** Error code of the gate when the outcome is not ok. */
  error?: string;
  /** The message the server was given when the outcome is not ok. */
  message?: string;
  /** Time spent waiting for the user to answer the permission prompt (absent in older records). */
  waitMs?: number;
  /** Time the service itself ran (absent in older records and for calls that never ran). */
  runMs?: number;
  /** From the call's arrival to its reply: waiting, running and recording together. */
  durationMs: number;
  /**
   * For a call recorded ahead (write-ahead): the seq of its intent record, which reached the disk
   * before the service ran. Intent records themselves are never shown: this record is the call's
   * one row, carrying everything the intent said plus the outcome.
   */
  intentSeq?: number;
  prevHash: string;
  hash: string;
  /** HMAC of `hash` under the log's key (absent in records written before the log had a key). */
  mac?: string;
}

/** What the gate hands to the audit log; seq, ts-defaults and the hash chain are the log's job. */
export type AuditEntry = Omit<
  AuditRecord,
  'seq' | 'prevHash' | 'hash' | 'mac' | 'paramsSha256' | 'params'
> & {
  params: unknown;
};

export interface AuditQuery {
  service?: string;
  /** Any of these services (the tools of one MCP server); an empty list matches nothing. */
  services?: string[];
  decision?: Decision;
  outcome?: Outcome;
  /**
   * The connection's display name as recorded. Alone, every record written under that name (a
   * name is not an identity: two profiles may share one, and a renamed profile's calls carry
   * both). With `connectionId`, it only adds the records written before ids were recorded.
   */
  connection?: string;
  /** The connection's id (DESIGN §3): its calls whatever it was named when they came. */
  connectionId?: string;
  /** Inclusive ISO time bounds. */
  from?: string;
  to?: string;
  /** Case-insensitive substring over service, callId, connection, message, error and params JSON. */
  text?: string;
  /** Newest first by default. */
  order?: 'asc' | 'desc';
  offset?: number;
  limit?: number;
}

export interface AuditPage {
  total: number;
  records: AuditRecord[];
}

/** The file formats `exportAudit` writes. */
export const AUDIT_EXPORT_FORMATS = ['json', 'csv'] as const;
export type AuditExportFormat = (typeof AUDIT_EXPORT_FORMATS)[number];

/**
 * Whether the keyed part of the chain was checked: `checked` (every keyed record's MAC and the
 * head's), `no-key` (the log is keyed but the key was not available here, e.g. the terminal reading
 * a folder whose key the desktop app keeps in the OS keychain: everything else was checked),
 * `none` (the log has no keyed records: written before the log had a key).
 */
export type AuditKeyCheck = 'checked' | 'no-key' | 'none';

interface AuditVerifyCommon {
  /** Calls recorded (one per call: intent records are not counted). */
  records: number;
  files: number;
  /** Lines that are not whole records, skipped. */
  tornLines: number;
  /** The newest line is a record cut short by a crash mid-write: expected after a crash, not tampering. */
  tornTail: boolean;
  keyCheck: AuditKeyCheck;
}

export type AuditVerifyResult =
  | ({ ok: true } & AuditVerifyCommon)
  | ({ ok: false; firstBadSeq: number; file: string; reason: string } & AuditVerifyCommon);

/**
 * What the free-text filter searches, lower-cased: NUL between fields so a search never matches
 * across two. One definition for the core's query and the UI's live updates.
 */
export function auditHaystack(r: AuditRecord): string {
  return [
    r.service,
    r.callId,
    r.connection,
    r.message ?? '',
    r.error ?? '',
    JSON.stringify(r.params) ?? '',
  ]
    .join('\u0000')
    .toLowerCase();
}

/** Whether one record passes a query's filters (paging and order aside). */
export function matchesAuditQuery(r: AuditRecord, q: AuditQuery): boolean {
  if (q.service !== undefined && r.service !== q.service) return false;
  if (q.services !== undefined && !q.services.includes(r.service)) return false;
  if (q.decision !== undefined && r.decision !== q.decision) return false;
  if (q.outcome !== undefined && r.outcome !== q.outcome) return false;
  if (!matchesConnection(r, q)) return false;
  if (q.from || q.to) {
    const t = Date.parse(r.ts);
    if (Number.isNaN(t)) return false;
    if (q.from && t < Date.parse(q.from)) return false;
    if (q.to && t > Date.parse(q.to)) return false;
  }
  return !q.text || auditHaystack(r).includes(q.text.toLowerCase());
}

/**
 * The record's connection id; undefined when it has none (written before ids were recorded, or
 * edited into something that is not one), so the core's index and this filter agree.
 */
export function connectionIdOf(r: Pick<AuditRecord, 'connectionId'>): string | undefined {
  const id: unknown = r.connectionId;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** The query's connection filter (see AuditQuery.connection and connectionId). */
export function matchesConnection(
  r: Pick<AuditRecord, 'connection' | 'connectionId'>,
  q: Pick<AuditQuery, 'connection' | 'connectionId'>,
): boolean {
  if (q.connectionId === undefined)
    return q.connection === undefined || r.connection === q.connection;
  const id = connectionIdOf(r);
  if (id !== undefined) return id === q.connectionId;
  return q.connection !== undefined && r.connection === q.connection;
}
