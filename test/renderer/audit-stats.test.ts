import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../app/contract/index.js';
import { latencyHistogram, runTimeOf } from '../../renderer/features/audit/stats.js';
import { en } from '../../renderer/i18n/en.js';
import { zhCN } from '../../renderer/i18n/zh-CN.js';

const rec = (over: Partial<AuditRecord>) =>
  ({ service: 's', outcome: 'ok', durationMs: 0, ...over }) as AuditRecord;

describe('the latency chart shows run time, not the user deciding', () => {
  it('charts runMs where a record has it, whatever the user waited', () => {
    const asked = rec({ waitMs: 24_555, runMs: 4, durationMs: 24_560 });
    expect(runTimeOf(asked)).toBe(4);
    const h = latencyHistogram([asked]);
    expect(h[0]).toEqual({ label: '<10ms', count: 1 });
    expect(h.at(-1)?.count).toBe(0);
  });

  it('falls back to durationMs for records written before runMs, and leaves out calls that never ran', () => {
    expect(runTimeOf(rec({ durationMs: 700 }))).toBe(700);
    expect(runTimeOf(rec({ outcome: 'refused', waitMs: 5000, durationMs: 5001 }))).toBeUndefined();
    expect(runTimeOf(rec({ outcome: 'interrupted', durationMs: 0 }))).toBeUndefined();
    const h = latencyHistogram([
      rec({ durationMs: 700 }),
      rec({ outcome: 'refused', durationMs: 9 }),
    ]);
    expect(h.reduce((n, b) => n + b.count, 0)).toBe(1);
  });

  it('has words for the new outcome, the wait and run times and the verify notes, in both languages', () => {
    for (const dict of [en, zhCN] as const) {
      expect(dict.outcome.interrupted).toBeTruthy();
      expect(dict.errorCode.audit_unavailable).toBeTruthy();
      expect(dict.activity.fields.waitMs).toBeTruthy();
      expect(dict.activity.fields.runMs).toBeTruthy();
      expect(dict.activity.verifyTornTail).toBeTruthy();
      expect(dict.activity.verifyNoKey).toBeTruthy();
      expect(dict.activity.verifyKeyed).toBeTruthy();
    }
  });
});
