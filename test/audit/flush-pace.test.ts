import { describe, expect, it } from 'vitest';
import { createNodeIo } from '../../app/audit/append.js';
import { FLUSH_PACE, FlushPace, type FlushPaceLimits } from '../../app/audit/flush-pace.js';
import { AuditLog } from '../../app/audit/log.js';
import { entry, useLogs, useTempDirs } from './helpers.js';

const limits: FlushPaceLimits = { ...FLUSH_PACE, window: 8 };

/**
 * A pace on a clock the test moves; `flush(ms)` times one flush of that length, made inline or in
 * the thread pool as the pace says when it starts, as the log makes it.
 */
function paced(l: FlushPaceLimits = limits) {
  let t = 1_000;
  const pace = new FlushPace(() => t, l);
  return {
    pace,
    flush(ms: number): void {
      const inline = pace.inline();
      const t0 = pace.started();
      t += ms;
      pace.finished(t0, inline);
    },
    wait(ms: number): void {
      t += ms;
    },
  };
}

describe('pacing the audit flush on a disk', () => {
  it('flushes in the thread pool until a whole window of flushes has shown the disk is quick', () => {
    const { pace, flush } = paced();
    for (let i = 0; i < limits.window - 1; i++) {
      flush(0.2);
      expect(pace.inline()).toBe(false);
    }
    flush(0.2);
    expect(pace.inline()).toBe(true);
  });

  it('never flushes inline on a disk that is never quick', () => {
    const { pace, flush } = paced();
    for (let i = 0; i < 100; i++) {
      flush(3);
      expect(pace.inline()).toBe(false);
    }
  });

  it('keeps flushing inline through a rare slow flush, and stops when slow ones are common', () => {
    const { pace, flush } = paced();
    for (let i = 0; i < limits.window; i++) flush(0.2);
    // One slow (but not stalling) flush in the window: still quick enough.
    flush(4);
    expect(pace.inline()).toBe(true);
    // A quarter of the window and more slow: back to the thread pool.
    flush(4);
    flush(4);
    expect(pace.inline()).toBe(false);
    // Quick again for a whole window: inline again.
    for (let i = 0; i < limits.window; i++) flush(0.2);
    expect(pace.inline()).toBe(true);
  });

  it('after a flush long enough to be noticed, stays off the event loop for the cool-off', () => {
    const { pace, flush, wait } = paced();
    for (let i = 0; i < limits.window; i++) flush(0.2);
    flush(limits.stallMs);
    // Whole milliseconds from here, so the clock adds up exactly.
    for (let i = 0; i < limits.window; i++) flush(0);
    expect(pace.inline()).toBe(false);
    wait(limits.coolMs - 1);
    expect(pace.inline()).toBe(false);
    wait(1);
    expect(pace.inline()).toBe(true);
  });
  it('counts only a stall made inline: one in the thread pool stalled nothing, and starts no cool-off', () => {
    const { pace, flush, wait } = paced();
    for (let i = 0; i < limits.window; i++) flush(0.2);
    flush(limits.stallMs); // inline: the event loop waited
    expect(pace.inline()).toBe(false);
    // In the thread pool now; a journal commit makes one of these wait as long.
    wait(limits.coolMs / 2);
    flush(limits.stallMs);
    for (let i = 0; i < limits.window; i++) flush(0);
    // The cool-off ends coolMs after the inline stall, not after the one in the pool.
    wait(limits.coolMs / 2 - limits.stallMs);
    expect(pace.inline()).toBe(true);
  });
});

describe('an audit log on a disk whose flushes are paced', () => {
  const tempDir = useTempDirs();
  const openLog = useLogs();

  it('keeps every record durable and verifiable whether its flush was inline or not', async () => {
    const dir = await tempDir();
    const key = 'k'.repeat(64);
    const decided: boolean[] = [];
    // A pace that says "quick" from the first flush on and records each decision.
    class Recorded extends FlushPace {
      override inline(): boolean {
        const inline = super.inline();
        decided.push(inline);
        return inline;
      }
    }
    const pace = new Recorded(undefined, { ...FLUSH_PACE, window: 4, quickMs: 60_000 });
    const io = createNodeIo(
      async () => false,
      () => pace,
    );
    const log = await openLog({ dir, key, io });
    const records = [];
    for (let i = 0; i < 20; i++) records.push(await log.append(entry({ callId: `s${i}` })));
    records.push(
      ...(await Promise.all(
        Array.from({ length: 30 }, (_, i) => log.append(entry({ callId: `c${i}` }))),
      )),
    );
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    // Both ways were taken: the thread pool while learning, inline after.
    expect(decided.slice(0, 4)).toEqual([false, false, false, false]);
    expect(decided.slice(4).length).toBeGreaterThan(0);
    expect(decided.slice(4).every((d) => d)).toBe(true);
    await log.close();
    const again = await AuditLog.open({ dir, key });
    try {
      expect(again.stats().records).toBe(50);
      expect(await again.verify()).toMatchObject({ ok: true, records: 50, keyCheck: 'checked' });
    } finally {
      await again.close();
    }
  });
});
