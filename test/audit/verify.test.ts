import { appendFile, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordHash } from '../../app/audit/chain.js';
import type { AuditLog } from '../../app/audit/log.js';
import { verifyAudit } from '../../app/audit/verify.js';
import type { AuditRecord } from '../../app/contract/audit.js';
import { entry, manualClock, useLogs, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();
const openLog = useLogs();

/** Five records: seq 1-2 in November's file, 3-5 in December's. */
async function twoMonths(): Promise<{ dir: string; log: AuditLog; nov: string; dec: string }> {
  const dir = await tempDir();
  const clock = manualClock('2026-11-20T00:00:00Z');
  const log = await openLog({ dir, clock });
  for (let i = 1; i <= 5; i++) {
    if (i === 3) clock.set('2026-12-02T00:00:00Z');
    await log.append(entry({ callId: `c${i}`, params: { n: i } }));
  }
  return { dir, log, nov: join(dir, '2026-11.jsonl'), dec: join(dir, '2026-12.jsonl') };
}

async function editLines(path: string, edit: (lines: string[]) => string[]): Promise<void> {
  const lines = (await readFile(path, 'utf8')).split('\n').filter(Boolean);
  await writeFile(path, `${edit(lines).join('\n')}\n`);
}

const patch = (line: string, change: Partial<AuditRecord>): string =>
  JSON.stringify({ ...(JSON.parse(line) as AuditRecord), ...change });

describe('verifyAudit', () => {
  it('accepts an untouched log across month files', async () => {
    const { dir } = await twoMonths();
    expect(await verifyAudit(dir)).toEqual({
      ok: true,
      records: 5,
      files: 2,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'none',
    });
  });

  it('accepts an empty or missing directory', async () => {
    const dir = await tempDir();
    expect(await verifyAudit(dir)).toEqual({
      ok: true,
      records: 0,
      files: 0,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'none',
    });
    expect(await verifyAudit(join(dir, 'none'))).toEqual({
      ok: true,
      records: 0,
      files: 0,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'none',
    });
  });

  it('detects a record whose field was edited', async () => {
    const { dir, dec } = await twoMonths();
    await editLines(dec, (l) => [
      l[0] as string,
      patch(l[1] as string, { decision: 'denied' }),
      l[2] as string,
    ]);
    expect(await verifyAudit(dir)).toEqual({
      ok: false,
      records: 5,
      files: 2,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'none',
      firstBadSeq: 4,
      file: dec,
      reason: 'hash mismatch (record edited)',
    });
  });

  it('detects an edit whose hash was recomputed, by the broken link to the next record', async () => {
    const { dir, nov } = await twoMonths();
    await editLines(nov, (l) => {
      const r = { ...(JSON.parse(l[0] as string) as AuditRecord), service: 'innocent' };
      return [JSON.stringify({ ...r, hash: recordHash(r) }), l[1] as string];
    });
    expect(await verifyAudit(dir)).toMatchObject({
      ok: false,
      firstBadSeq: 2,
      file: nov,
      reason: 'chain broken (record removed or reordered)',
    });
  });

  it('detects a deleted record', async () => {
    const { dir, dec } = await twoMonths();
    await editLines(dec, (l) => [l[0] as string, l[2] as string]);
    expect(await verifyAudit(dir)).toMatchObject({
      ok: false,
      records: 4,
      firstBadSeq: 5,
      file: dec,
      reason: 'chain broken (record removed or reordered)',
    });
  });

  it('detects a deleted month file', async () => {
    const { dir, nov, dec } = await twoMonths();
    await rm(nov);
    expect(await verifyAudit(dir)).toMatchObject({
      ok: false,
      firstBadSeq: 3,
      file: dec,
      files: 1,
    });
  });

  it('detects reordered records', async () => {
    const { dir, dec } = await twoMonths();
    await editLines(dec, (l) => [l[1] as string, l[0] as string, l[2] as string]);
    expect(await verifyAudit(dir)).toMatchObject({
      ok: false,
      firstBadSeq: 4,
      reason: 'chain broken (record removed or reordered)',
    });
  });

  it('detects a record damaged into garbage by the break after it', async () => {
    const { dir, nov } = await twoMonths();
    await editLines(nov, (l) => [l[0] as string, (l[1] as string).slice(0, 40)]);
    expect(await verifyAudit(dir)).toMatchObject({ ok: false, tornLines: 1, firstBadSeq: 3 });
  });

  it('does not fail on a torn final line, but counts it and says it is torn', async () => {
    const { dir, dec } = await twoMonths();
    await appendFile(dec, '{"seq":6,"ts":"2026-12');
    expect(await verifyAudit(dir)).toEqual({
      ok: true,
      records: 5,
      files: 2,
      tornLines: 1,
      tornTail: true,
      keyCheck: 'none',
    });
  });

  it('reads the disk, not the memory cache, and notices records cut off the end', async () => {
    const { log, dec } = await twoMonths();
    expect((await log.verify()).ok).toBe(true);
    await editLines(dec, (l) => l.slice(0, 2));
    expect(await log.verify()).toMatchObject({
      ok: false,
      records: 4,
      firstBadSeq: 5,
      file: dec,
      reason: expect.stringMatching(/^records missing at the end/),
    });
  });
});
