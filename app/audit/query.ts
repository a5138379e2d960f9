import type { AuditPage, AuditQuery, AuditRecord } from '../contract/audit.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/**
 * The records in memory, oldest first, with what filtering needs precomputed. Loaded once when the
 * log opens and appended to as records are written, so a query never touches the disk: the audit
 * page filters as the user types, over a log that reaches 100 000 records in a busy year.
 */
export class RecordIndex {
  private readonly records: AuditRecord[] = [];
  private readonly times: number[] = [];
  /** Lower-cased text for the `text` filter, built on first use (most records are never searched). */
  private readonly haystacks: (string | undefined)[] = [];

  get size(): number {
    return this.records.length;
  }

  last(): AuditRecord | undefined {
    return this.records[this.records.length - 1];
  }

  push(record: AuditRecord): void {
    this.records.push(deepFreeze(record));
    this.times.push(Date.parse(record.ts));
  }

  /** One page of the records matching `q`, and how many match in all. */
  page(q: AuditQuery = {}): AuditPage {
    const offset = clampInt(q.offset, 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = clampInt(q.limit, DEFAULT_LIMIT, 0, MAX_LIMIT);
    const records: AuditRecord[] = [];
    let total = 0;
    this.scan(q, (record) => {
      if (total >= offset && total < offset + limit) records.push(record);
      total += 1;
    });
    return { total, records };
  }

  /** Every record matching `q` in its order, offset and limit ignored (for export). */
  select(q: AuditQuery = {}): AuditRecord[] {
    const out: AuditRecord[] = [];
    this.scan(q, (record) => out.push(record));
    return out;
  }

  private scan(q: AuditQuery, visit: (record: AuditRecord) => void): void {
    const match = this.matcher(q);
    const n = this.records.length;
    if (q.order === 'asc') {
      for (let i = 0; i < n; i++) if (match(i)) visit(this.records[i] as AuditRecord);
    } else {
      for (let i = n - 1; i >= 0; i--) if (match(i)) visit(this.records[i] as AuditRecord);
    }
  }

  private matcher(q: AuditQuery): (i: number) => boolean {
    const from = parseBound('from', q.from);
    const to = parseBound('to', q.to);
    const needle = q.text ? q.text.toLowerCase() : '';
    return (i) => {
      const r = this.records[i] as AuditRecord;
      if (q.service !== undefined && r.service !== q.service) return false;
      if (q.decision !== undefined && r.decision !== q.decision) return false;
      if (q.outcome !== undefined && r.outcome !== q.outcome) return false;
      if (q.connection !== undefined && r.connection !== q.connection) return false;
      if (from !== undefined || to !== undefined) {
        // A record whose ts does not parse has no place in time: a time filter excludes it.
        const t = this.times[i] as number;
        if (Number.isNaN(t)) return false;
        if (from !== undefined && t < from) return false;
        if (to !== undefined && t > to) return false;
      }
      if (needle !== '' && !this.haystack(i).includes(needle)) return false;
      return true;
    };
  }

  private haystack(i: number): string {
    let text = this.haystacks[i];
    if (text === undefined) {
      const r = this.records[i] as AuditRecord;
      // NUL between fields so a search can never match across two of them.
      text = [
        r.service,
        r.callId,
        r.connection,
        r.message ?? '',
        r.error ?? '',
        JSON.stringify(r.params) ?? '',
      ]
        .join('\u0000')
        .toLowerCase();
      this.haystacks[i] = text;
    }
    return text;
  }
}

function parseBound(name: 'from' | 'to', value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const t = Date.parse(value);
  if (Number.isNaN(t)) {
    throw new RangeError(
      `audit query: '${name}' must be an ISO 8601 time, got ${JSON.stringify(value)}`,
    );
  }
  return t;
}

function clampInt(value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, Math.floor(value)));
}

/** Records handed out by queries are shared with the index: freezing keeps a caller's edit out of it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
