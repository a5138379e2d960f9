/**
 * Activity → Verify runs while servers go on calling: the records written while it reads the files
 * are checked like the rest, and the log's end is judged at the seq it had when verify began.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordHash } from '../../app/audit/chain.js';
import type { AuditRecord } from '../../app/contract/audit.js';
import { entry, manualClock, useLogs, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();
const openLog = useLogs();

describe('verify while calls are recorded', () => {
  it('passes, however many records arrive while it reads', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    const record = (i: number) => entry({ callId: `c${i}`, message: 'm'.repeat(300) });
    // Enough records that reading them takes several reads, with calls recorded in between.
    for (let i = 0; i < 8000; i += 500)
      await Promise.all(Array.from({ length: 500 }, (_, k) => log.append(record(i + k))));
    let stop = false;
    let n = 8000;
    const calls = (async () => {
      while (!stop) {
        await log.append(record(n++));
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    })();
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await log.verify());
    stop = true;
    await calls;
    expect(n).toBeGreaterThan(8005); // calls were recorded during the verifies
    expect(results.map((r) => (r.ok ? 'ok' : r.reason))).toEqual(Array(5).fill('ok'));
    expect(await log.verify()).toMatchObject({ ok: true, records: n });
  });

  it('still catches the newest record replaced by one that chains (the log knows its hash)', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    for (let i = 0; i < 3; i++) await log.append(entry({ callId: `c${i}` }));
    const file = join(dir, '2026-11.jsonl');
    const lines = (await readFile(file, 'utf8')).replace(/\0+$/, '').split('\n');
    const { hash: _, ...third } = JSON.parse(lines[2]!) as AuditRecord;
    const forged = { ...third, callId: 'forged' };
    lines[2] = JSON.stringify({ ...forged, hash: recordHash(forged) });
    await writeFile(file, lines.join('\n'));
    expect(await log.verify()).toMatchObject({
      ok: false,
      firstBadSeq: 3,
      reason: expect.stringMatching(/replaced/),
    });
  });
});
