import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_NAME, cutName } from '../../app/audit/bounds.js';
import { Interner, OVERFLOW_ID } from '../../app/audit/columns.js';
import { MonthReader, runSync } from '../../app/audit/lines.js';
import { RECENT_BYTES, RecordIndex } from '../../app/audit/query.js';
import type { AuditQuery, AuditRecord } from '../../app/contract/audit.js';
import { sha256Hex } from '../../app/audit/redact.js';
import { entry, logText, manualClock, useLogs, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();
const openLog = useLogs();
const MB3 = 3 << 20;

describe('bounded records', () => {
  it('cuts a name to its stated length and keeps the sha256 of the whole', () => {
    const long = 'm'.repeat(MB3);
    const cut = cutName(long);
    expect(cut.length).toBeLessThan(MAX_NAME + 120);
    expect(cut.startsWith('m'.repeat(MAX_NAME))).toBe(true);
    expect(cut).toContain(sha256Hex(long));
    expect(cutName('short')).toBe('short');
  });

  it('stores calls with 3 MB names, ids, keys and strings in a few KB each', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    const before = log.memoryBytes();
    for (let i = 0; i < 40; i++) {
      const big = `${i}`.padEnd(MB3, 'x');
      await log.append(
        entry({
          service: big,
          callId: big,
          connection: big,
          connectionId: big,
          message: `there is no service named '${big}'`,
          params: { [big]: big, ok: 'small' },
        }),
      );
    }
    const text = await logText(join(dir, '2026-11.jsonl'));
    const records = text.split('\n').filter(Boolean);
    expect(records).toHaveLength(40);
    for (const line of records) expect(line.length).toBeLessThan(8 * 1024);
    const first = JSON.parse(records[0] as string) as Record<string, unknown>;
    expect(first.service).toContain(sha256Hex('0'.padEnd(MB3, 'x')));
    // Every distinct name is still told apart, and filtering by the stored name finds it.
    expect((await log.query({ service: first.service as string })).total).toBe(1);
    expect(log.memoryBytes() - before).toBeLessThan(2 << 20);
  });

  it('sizes the cache of recent records in bytes, not entries', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    // Records of ~6 KB each (many strings at the cut length): 1000 of them would be ~6 MB.
    const params = Object.fromEntries(
      Array.from({ length: 30 }, (_, k) => [`k${k}`, 'y'.repeat(400)]),
    );
    await Promise.all(Array.from({ length: 1000 }, () => log.append(entry({ params }))));
    expect(log.memoryBytes()).toBeLessThan(RECENT_BYTES + (1 << 20));
    // Still answered, now partly from disk.
    expect((await log.query({ limit: 1000 })).records).toHaveLength(1000);
  });
});

describe('name tables of the index', () => {
  it('stay within their byte budget however many distinct names a server invents', () => {
    const names = new Interner(4096);
    for (let i = 0; i < 10_000; i++) names.id(`method-${i}`.padEnd(100, 'x'));
    expect(names.bytes).toBeLessThanOrEqual(4096);
    expect(names.overflowed).toBe(true);
    expect(names.id('method-9999'.padEnd(100, 'x'))).toBe(OVERFLOW_ID);
    expect(names.id('method-0'.padEnd(100, 'x'))).toBe(0);
  });

  it('still find a record by a name the table had no room for, and only that record', () => {
    const index = new RecordIndex(4096);
    const name = (i: number) => `method-${i}`.padEnd(100, 'x');
    for (let i = 0; i < 300; i++) {
      const record = {
        ...entry({ service: name(i), callId: `c${i}` }),
        seq: i + 1,
        paramsSha256: '0'.repeat(64),
        prevHash: '0'.repeat(64),
        hash: '1'.repeat(64),
      } as AuditRecord;
      index.push(record, index.fileId('/nonexistent'), 0, 10, true);
    }
    const page = (q: AuditQuery) => runSync(index.page(q), new MonthReader(index.paths));
    expect(page({ service: name(250) }).records.map((r) => r.callId)).toEqual(['c250']);
    expect(page({ service: name(3) }).records.map((r) => r.callId)).toEqual(['c3']);
    expect(page({ service: name(999) }).total).toBe(0);
    // A list mixing a name in the table with one past it finds both records, and no other.
    expect(
      page({ services: [name(3), name(250), name(999)], order: 'asc' }).records.map(
        (r) => r.callId,
      ),
    ).toEqual(['c3', 'c250']);
    expect(page({ service: name(280), text: 'c28' }).records.map((r) => r.callId)).toEqual([
      'c280',
    ]);
  });
});
