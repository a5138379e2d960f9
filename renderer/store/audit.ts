/**
 * The Activity table's data: a sparse window over the audit log, newest first, that stays
 * cheap at 100 000 records. Rows are kept by their rank counted from the oldest matching record,
 * which does not change when live records are prepended (their view index does), so pages loaded
 * earlier stay valid as new calls arrive. Pages are fetched for what the table shows.
 */
import { create } from 'zustand';
import {
  type AuditQuery,
  type AuditRecord,
  type Decision,
  type Outcome,
  connectionIdOf,
  matchesAuditQuery,
} from '../../app/contract/index.js';
import { bridge } from '../bridge/current.js';
import { errorMessage } from '../bridge/types.js';

export const AUDIT_PAGE = 500;

/** The filter form as typed (time bounds as `datetime-local` values, '' for "any"). */
export interface AuditFilters {
  service: string;
  /** An MCP server's id ('' for any) and the services its tools became (what is queried). */
  server: string;
  serverServices: readonly string[];
  decision: Decision | '';
  outcome: Outcome | '';
  /**
   * The connection's id ('' for any), and the name its records carried before ids were recorded;
   * a name alone picks such older records that no connection here claims.
   */
  connectionId: string;
  connection: string;
  from: string;
  to: string;
  text: string;
}

export const NO_FILTERS: AuditFilters = {
  service: '',
  server: '',
  serverServices: [],
  decision: '',
  outcome: '',
  connectionId: '',
  connection: '',
  from: '',
  to: '',
  text: '',
};

/** A `datetime-local` value ("2025-01-22T14:30") read as local time, in ISO UTC; '' if unusable. */
export function localToIso(value: string, endOfMinute = false): string {
  if (!value) return '';
  const t = new Date(value).getTime();
  if (Number.isNaN(t)) return '';
  return new Date(endOfMinute ? t + 59_999 : t).toISOString();
}

export function queryOf(f: AuditFilters): AuditQuery {
  const q: AuditQuery = { order: 'desc' };
  if (f.service) q.service = f.service;
  if (f.server) q.services = [...f.serverServices];
  if (f.decision) q.decision = f.decision;
  if (f.outcome) q.outcome = f.outcome;
  if (f.connectionId) q.connectionId = f.connectionId;
  if (f.connection) q.connection = f.connection;
  const from = localToIso(f.from);
  const to = localToIso(f.to, true);
  if (from) q.from = from;
  if (to) q.to = to;
  const text = f.text.trim().slice(0, 200);
  if (text) q.text = text;
  return q;
}

/** The core's filter applied to one live record (one definition, in the contract). */
export const matchesQuery = matchesAuditQuery;

/** Sparse rows by rank (0 = oldest matching record). Mutated in place; `version` signals changes. */
export class AuditRows {
  readonly byRank = new Map<number, AuditRecord>();
  private readonly rankOfSeq = new Map<number, number>();
  total = 0;

  /** The record at view index `i` (0 = newest), if loaded. */
  at(i: number): AuditRecord | undefined {
    return this.byRank.get(this.total - 1 - i);
  }

  /** Store a page fetched at `offset` whose answer counted `pageTotal` matching records. */
  addPage(offset: number, pageTotal: number, records: AuditRecord[]): void {
    // Records counted by the server but not yet by us arrived meanwhile: the count only grows.
    this.total = Math.max(this.total, pageTotal);
    records.forEach((r, j) => {
      const rank = pageTotal - 1 - (offset + j);
      if (rank < 0) return;
      const known = this.rankOfSeq.get(r.seq);
      if (known !== undefined && known !== rank) this.byRank.delete(known);
      this.byRank.set(rank, r);
      this.rankOfSeq.set(r.seq, rank);
    });
  }

  /** A record that just happened, on top; false if it was already there. */
  prepend(r: AuditRecord): boolean {
    if (this.rankOfSeq.has(r.seq)) return false;
    const rank = this.total;
    this.total += 1;
    this.byRank.set(rank, r);
    this.rankOfSeq.set(r.seq, rank);
    return true;
  }

  /** True when a row of [start, end) is missing. */
  missing(start: number, end: number): boolean {
    for (let i = Math.max(0, start); i < Math.min(end, this.total); i++)
      if (!this.byRank.has(this.total - 1 - i)) return true;
    return false;
  }

  get loaded(): number {
    return this.byRank.size;
  }

  records(): AuditRecord[] {
    return [...this.byRank.values()];
  }

  indexOfSeq(seq: number): number | undefined {
    const rank = this.rankOfSeq.get(seq);
    return rank === undefined ? undefined : this.total - 1 - rank;
  }
}

interface AuditStore {
  filters: AuditFilters;
  query: AuditQuery;
  rows: AuditRows;
  version: number;
  /** Before the first page of the current filters arrived. */
  loading: boolean;
  error: string | undefined;
  generation: number;
  inflight: Set<number>;
  /**
   * Connections (ids with the name last met; names of records without an id) and services met in
   * any loaded record, for the filter choices; kept across reloads.
   */
  seen: { connectionIds: Map<string, string>; connectionNames: Set<string>; services: Set<string> };
  setFilters(patch: Partial<AuditFilters>): void;
  reload(): void;
  ensureRange(start: number, end: number): void;
  live(record: AuditRecord): void;
}

export const useAudit = create<AuditStore>()((set, get) => {
  function fetchPage(page: number): void {
    const s = get();
    if (s.inflight.has(page)) return;
    s.inflight.add(page);
    const generation = s.generation;
    const offset = page * AUDIT_PAGE;
    bridge()
      .invoke('queryAudit', { ...s.query, offset, limit: AUDIT_PAGE })
      .then(
        (result) => {
          const now = get();
          if (now.generation !== generation) return;
          now.inflight.delete(page);
          now.rows.addPage(offset, result.total, result.records);
          for (const r of result.records) note(r);
          set({ version: now.version + 1, loading: false, error: undefined });
        },
        (err: unknown) => {
          const now = get();
          if (now.generation !== generation) return;
          now.inflight.delete(page);
          set({ loading: false, error: errorMessage(err) });
        },
      );
  }

  function note(r: AuditRecord): void {
    const { seen } = get();
    const id = connectionIdOf(r);
    if (id === undefined) seen.connectionNames.add(r.connection);
    else seen.connectionIds.set(id, r.connection);
    seen.services.add(r.service);
  }

  return {
    filters: NO_FILTERS,
    query: queryOf(NO_FILTERS),
    rows: new AuditRows(),
    version: 0,
    loading: false,
    error: undefined,
    generation: 0,
    inflight: new Set(),
    seen: { connectionIds: new Map(), connectionNames: new Set(), services: new Set() },
    setFilters: (patch) => {
      const filters = { ...get().filters, ...patch };
      set({ filters, query: queryOf(filters) });
      get().reload();
    },
    reload: () => {
      set((s) => ({
        rows: new AuditRows(),
        generation: s.generation + 1,
        inflight: new Set(),
        version: s.version + 1,
        loading: true,
        error: undefined,
      }));
      fetchPage(0);
    },
    ensureRange: (start, end) => {
      const { rows, loading } = get();
      if (loading) return;
      const first = Math.floor(Math.max(0, start) / AUDIT_PAGE);
      const last = Math.floor(Math.max(0, end - 1) / AUDIT_PAGE);
      for (let p = first; p <= last; p++) {
        if (rows.missing(p * AUDIT_PAGE, (p + 1) * AUDIT_PAGE)) fetchPage(p);
      }
    },
    live: (record) => {
      const s = get();
      note(record);
      if (!matchesQuery(record, s.query)) return;
      if (s.rows.prepend(record)) set({ version: s.version + 1 });
    },
  };
});

/** Whether any filter is set (the server's tool list follows its id). */
export function anyFilterSet(f: AuditFilters): boolean {
  return Object.entries(f).some(([key, v]) => key !== 'serverServices' && v !== '');
}
