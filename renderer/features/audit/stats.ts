/** What the Activity charts show, computed over the loaded records. Pure. */
import type { AuditRecord } from '../../../app/contract/index.js';

export interface Bar {
  label: string;
  count: number;
}

export function callsPerService(records: Iterable<AuditRecord>, top = 8): Bar[] {
  const counts = new Map<string, number>();
  for (const r of records) counts.set(r.service, (counts.get(r.service) ?? 0) + 1);
  const sorted = [...counts.entries()]
    .map(([label, count]) => ({ label, count }))
    .sort((a, b) => b.count - a.count || a.label.localeCompare(b.label));
  if (sorted.length <= top) return sorted;
  const rest = sorted.slice(top - 1).reduce((n, b) => n + b.count, 0);
  return [...sorted.slice(0, top - 1), { label: '…', count: rest }];
}

/** Upper bounds (ms, exclusive) of the latency buckets; the last bucket is open. */
export const LATENCY_BOUNDS = [10, 50, 100, 250, 500, 1000, 2500, 5000, 10_000] as const;

/** A bucket's label: its upper bound ("10ms", "2.5s"), the open last one as "≥10s". */
export function latencyLabel(i: number): string {
  const fmt = (ms: number) => (ms >= 1000 ? `${ms / 1000}s` : `${ms}ms`);
  const hi = LATENCY_BOUNDS[i];
  if (hi === undefined) return `≥${fmt(LATENCY_BOUNDS[LATENCY_BOUNDS.length - 1] ?? 0)}`;
  return `<${fmt(hi)}`;
}

/**
 * How long the service itself ran: `runMs`, apart from the time the user took to decide (which
 * would skew the chart by seconds). Records from before `runMs` was kept show their `durationMs`;
 * a call that never ran (refused, withdrawn, or interrupted before its outcome) has no run time.
 */
export function runTimeOf(r: AuditRecord): number | undefined {
  if (r.runMs !== undefined) return Number.isFinite(r.runMs) ? Math.max(0, r.runMs) : 0;
  if (r.outcome === 'refused' || r.outcome === 'interrupted' || r.outcome === 'cancelled')
    return undefined;
  return Number.isFinite(r.durationMs) ? Math.max(0, r.durationMs) : 0;
}

export function latencyHistogram(records: Iterable<AuditRecord>): Bar[] {
  const counts = new Array<number>(LATENCY_BOUNDS.length + 1).fill(0);
  for (const r of records) {
    const ms = runTimeOf(r);
    if (ms === undefined) continue;
    let i = LATENCY_BOUNDS.findIndex((b) => ms < b);
    if (i < 0) i = LATENCY_BOUNDS.length;
    counts[i] = (counts[i] ?? 0) + 1;
  }
  return counts.map((count, i) => ({ label: latencyLabel(i), count }));
}
