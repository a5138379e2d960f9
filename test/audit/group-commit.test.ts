import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeIo, type AuditIo } from '../../app/audit/append.js';
import type { AuditRecord } from '../../app/contract/audit.js';
import { entry, logText, manualClock, useLogs, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();
const openLog = useLogs();

/**
 * Real file access that counts fsyncs and knows which bytes are durable: `durable` is the text
 * written before the last fsync that completed. `hold()` makes the next fsync wait (`reached`
 * resolves once it does) until `release()`; `failNextWrite` makes the next write land half its
 * bytes and fail like a full disk.
 */
interface Hold {
  reached: Promise<void>;
  release: () => void;
}

function observedIo(): {
  io: AuditIo;
  syncs: () => number;
  durable: () => string;
  hold: () => Hold;
  failNextWrite: () => void;
} {
  let syncs = 0;
  /** The file's bytes as written (in place, at positions: append.ts writes over its room). */
  let written = Buffer.alloc(0);
  let durable = '';
  const writeAt = (bytes: Buffer, position: number): void => {
    const end = position + bytes.length;
    if (end > written.length)
      written = Buffer.concat([written, Buffer.alloc(end - written.length)]);
    bytes.copy(written, position);
  };
  let held: { arrive: () => void; gate: Promise<void> } | undefined;
  let fail = false;
  const io: AuditIo = {
    ...nodeIo,
    openAppend: async (path) => {
      const real = await nodeIo.openAppend(path);
      written = await readFile(path);
      return {
        stat: () => real.stat(),
        read: (...args) => real.read(...args),
        truncate: async (len) => {
          await real.truncate(len);
          written = written.subarray(0, len);
        },
        close: () => real.close(),
        write: async (buffer, offset, length, position) => {
          if (fail) {
            fail = false;
            const half = Math.floor(length / 2);
            await real.write(buffer, offset, half, position);
            writeAt(buffer.subarray(offset, offset + half), position);
            throw Object.assign(new Error('ENOSPC: simulated'), { code: 'ENOSPC' });
          }
          const r = await real.write(buffer, offset, length, position);
          writeAt(buffer.subarray(offset, offset + r.bytesWritten), position);
          return r;
        },
        sync: async () => {
          const covered = written.toString('utf8');
          const hold = held;
          held = undefined;
          if (hold) {
            hold.arrive();
            await hold.gate;
          }
          await real.sync();
          syncs += 1;
          durable = covered;
        },
      };
    },
  };
  return {
    io,
    syncs: () => syncs,
    durable: () => durable,
    hold: () => {
      let arrive = (): void => undefined;
      let release = (): void => undefined;
      const reached = new Promise<void>((resolve) => {
        arrive = resolve;
      });
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      held = { arrive, gate };
      return { reached, release };
    },
    failNextWrite: () => {
      fail = true;
    },
  };
}

/** Resolves once the event loop has run pending I/O callbacks a few times. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

function expectChained(records: readonly AuditRecord[], firstSeq: number): void {
  records.forEach((r, i) => {
    expect(r.seq).toBe(firstSeq + i);
    if (i > 0) expect(r.prevHash).toBe(records[i - 1]?.hash);
  });
}

describe('AuditLog group commit', () => {
  it('writes 100 concurrent appends with far fewer fsyncs, each resolved only once durable', async () => {
    const dir = await tempDir();
    const disk = observedIo();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z'), io: disk.io });
    const first = await log.append(entry({ callId: 'first' })); // the file exists from here on
    const syncsBefore = disk.syncs();
    const notDurableAtResolve: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        log.append(entry({ callId: `c${i}` })).then((r) => {
          if (!disk.durable().includes(`${JSON.stringify(r)}\n`)) notDurableAtResolve.push(r.seq);
          return r;
        }),
      ),
    );

    expect(disk.syncs() - syncsBefore).toBeGreaterThanOrEqual(1);
    expect(disk.syncs() - syncsBefore).toBeLessThan(10);
    expect(notDurableAtResolve).toEqual([]);
    expect(results.map((r) => r.callId)).toEqual(Array.from({ length: 100 }, (_, i) => `c${i}`));
    expectChained([first, ...results], 1);
    const onDisk = (await logText(join(dir, '2026-11.jsonl'))).split('\n');
    expect(onDisk).toEqual([first, ...results].map((r) => JSON.stringify(r)).concat(''));
    expect(await log.verify()).toEqual({
      ok: true,
      records: 101,
      files: 1,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'none',
    });
  });

  it('batches appends that arrive during an fsync into the next single write + fsync', async () => {
    const dir = await tempDir();
    const disk = observedIo();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z'), io: disk.io });
    const resolved: number[] = [];
    const track = (p: Promise<AuditRecord>): Promise<AuditRecord> =>
      p.then((r) => {
        resolved.push(r.seq);
        return r;
      });

    const firstSync = disk.hold();
    const first = track(log.append(entry({ callId: 'first' })));
    await firstSync.reached; // the first record is written alone; its fsync is held
    const later = Array.from({ length: 20 }, (_, i) =>
      track(log.append(entry({ callId: `later${i}` }))),
    );
    await settle();
    expect(resolved).toEqual([]); // nothing resolves before the fsync covering it
    expect(disk.syncs()).toBe(0);

    const secondSync = disk.hold();
    firstSync.release();
    await secondSync.reached; // the 20 are written together, their fsync held
    await settle();
    expect(resolved).toEqual([1]);
    expect(disk.syncs()).toBe(1);

    secondSync.release();
    const records = [await first, ...(await Promise.all(later))];
    expect(disk.syncs()).toBe(2);
    expect(resolved).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expectChained(records, 1);
    expect(await log.verify()).toEqual({
      ok: true,
      records: 21,
      files: 1,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'none',
    });
  });

  it('rejects every append of a failed batch, rolls the file back and chains the next append on', async () => {
    const dir = await tempDir();
    const disk = observedIo();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z'), io: disk.io });
    const announced: number[] = [];
    log.onAppend((r) => announced.push(r.seq));
    const file = join(dir, '2026-11.jsonl');

    const firstSync = disk.hold();
    const first = log.append(entry({ callId: 'first' }));
    await firstSync.reached;
    disk.failNextWrite();
    const lost = Array.from({ length: 5 }, (_, i) =>
      log.append(entry({ callId: `lost${i}` })).catch((e: unknown) => e as Error),
    );
    firstSync.release();
    const a = await first;
    const errors = await Promise.all(lost);
    for (const err of errors) {
      expect(err).toBeInstanceOf(Error);
      expect(err.message).toBe(
        `audit log could not be written to ${file}: no space left on device (ENOSPC)`,
      );
    }
    expect(await readFile(file, 'utf8')).toBe(`${JSON.stringify(a)}\n`);
    expect(log.stats()).toEqual({ records: 1, files: 1, tornLines: 0 });
    expect(announced).toEqual([1]);

    const [b, c] = await Promise.all([
      log.append(entry({ callId: 'b' })),
      log.append(entry({ callId: 'c' })),
    ]);
    expect(b).toMatchObject({ seq: 2, prevHash: a.hash });
    expect(c).toMatchObject({ seq: 3, prevHash: b?.hash });
    expect(announced).toEqual([1, 2, 3]);
    expect((await log.query({ order: 'asc' })).records.map((r) => r.callId)).toEqual([
      'first',
      'b',
      'c',
    ]);
    expect(await log.verify()).toEqual({
      ok: true,
      records: 3,
      files: 1,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'none',
    });
  });

  it('rejects a bad entry in a batch alone and keeps the others chained', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    const settled = await Promise.allSettled([
      log.append(entry({ callId: 'a' })),
      log.append(entry({ callId: 'bad', outcome: 'maybe' as never })),
      log.append(entry({ callId: 'b', message: 10n as never })), // JSON cannot hold a bigint
      log.append(entry({ callId: 'c' })),
    ]);
    expect(settled.map((s) => s.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    const records = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    expectChained(records, 1);
    expect(await log.verify()).toEqual({
      ok: true,
      records: 2,
      files: 1,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'none',
    });
  });

  it('splits a batch at a month change, each part into its own file', async () => {
    const dir = await tempDir();
    const disk = observedIo();
    const clock = manualClock('2026-11-30T23:59:59Z');
    const log = await openLog({ dir, clock, io: disk.io });
    const firstSync = disk.hold();
    const first = log.append(entry({ callId: 'nov' }));
    await firstSync.reached;
    const waiting = [log.append(entry({ callId: 'dec1' })), log.append(entry({ callId: 'dec2' }))];
    clock.set('2026-12-01T00:00:01Z');
    firstSync.release();
    const records = [await first, ...(await Promise.all(waiting))];
    expectChained(records, 1);
    expect((await logText(join(dir, '2026-12.jsonl'))).split('\n')).toEqual([
      JSON.stringify(records[1]),
      JSON.stringify(records[2]),
      '',
    ]);
    expect(await log.verify()).toEqual({
      ok: true,
      records: 3,
      files: 2,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'none',
    });
  });

  it('close waits for the batch in flight and refuses what comes after', async () => {
    const dir = await tempDir();
    const disk = observedIo();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z'), io: disk.io });
    const sync = disk.hold();
    const pending = [log.append(entry()), log.append(entry())];
    await sync.reached;
    const closing = log.close();
    await expect(log.append(entry())).rejects.toThrow(/is closed/);
    sync.release();
    await closing;
    expect((await Promise.all(pending)).map((r) => r.seq)).toEqual([1, 2]);
    expect((await log.query()).total).toBe(2); // queries still read the files after close
  });
});
