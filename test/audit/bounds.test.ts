import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_NAME, cutName } from '../../app/audit/bounds.js';
import { RECENT_BYTES } from '../../app/audit/query.js';
import { sha256Hex } from '../../app/audit/redact.js';
import { entry, manualClock, useLogs, useTempDirs } from './helpers.js';

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
    const text = await readFile(join(dir, '2026-11.jsonl'), 'utf8');
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
