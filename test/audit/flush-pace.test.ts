import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createNodeIo } from '../../app/audit/append.js';
import { FLUSH_PACE, FlushPace, type FlushPaceLimits } from '../../app/audit/flush-pace.js';
import { FlushThread } from '../../app/audit/flush-thread.js';
import { AuditLog } from '../../app/audit/log.js';
import { entry, useLogs, useTempDirs } from './helpers.js';

const limits: FlushPaceLimits = { ...FLUSH_PACE, window: 8 };

/** A pace on a clock the test moves; `flush(ms)` times one flush of that length. */
function paced(l: FlushPaceLimits = limits) {
  let t = 1_000;
  const pace = new FlushPace(() => t, l);
  return {
    pace,
    flush(ms: number): void {
      const t0 = pace.started();
      t += ms;
      pace.finished(t0);
    },
  };
}

describe('pacing the audit flush on a disk', () => {
  it('flushes in the thread pool until a whole window of flushes has shown the disk is quick', () => {
    const { pace, flush } = paced();
    for (let i = 0; i < limits.window - 1; i++) {
      flush(0.2);
      expect(pace.quick()).toBe(false);
    }
    flush(0.2);
    expect(pace.quick()).toBe(true);
  });

  it('never uses the flush thread on a disk that is never quick', () => {
    const { pace, flush } = paced();
    for (let i = 0; i < 100; i++) {
      flush(3);
      expect(pace.quick()).toBe(false);
    }
  });

  it('keeps using the flush thread through a rare slow flush, and stops when slow ones are common', () => {
    const { pace, flush } = paced();
    for (let i = 0; i < limits.window; i++) flush(0.2);
    // One slow flush in the window, however slow (one that met a journal commit): still quick.
    flush(50);
    expect(pace.quick()).toBe(true);
    // A quarter of the window and more slow: back to the thread pool.
    flush(4);
    flush(4);
    expect(pace.quick()).toBe(false);
    // Quick again for a whole window: the flush thread again.
    for (let i = 0; i < limits.window; i++) flush(0.2);
    expect(pace.quick()).toBe(true);
  });
});

describe('an audit log on a disk whose flushes are paced', () => {
  const tempDir = useTempDirs();
  const openLog = useLogs();

  it('keeps every record durable and verifiable whether it was flushed on the flush thread or in the pool', async () => {
    const dir = await tempDir();
    const key = 'k'.repeat(64);
    const decided: boolean[] = [];
    // A pace that says "quick" from the first flush on and records each decision.
    class Recorded extends FlushPace {
      override quick(): boolean {
        const quick = super.quick();
        decided.push(quick);
        return quick;
      }
    }
    const pace = new Recorded(undefined, { ...FLUSH_PACE, window: 4, quickMs: 60_000 });
    let threadFlushes = 0;
    class Counted extends FlushThread {
      override flush(fd: number): Promise<void> {
        threadFlushes += 1;
        return super.flush(fd);
      }
    }
    const thread = new Counted();
    // Started (and running) before the log's first flush, so the quick ones find it ready.
    thread.start();
    await vi.waitFor(() => expect(thread.ready).toBe(true));
    onTestFinished(() => thread.stop());
    const io = createNodeIo(
      async () => false,
      () => pace,
      () => thread,
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
    // Both ways were taken: the thread pool while learning, the flush thread after.
    expect(decided.slice(0, 4)).toEqual([false, false, false, false]);
    expect(decided.slice(4).length).toBeGreaterThan(0);
    expect(decided.slice(4).every((d) => d)).toBe(true);
    expect(threadFlushes).toBe(decided.length - 4);
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
