import { appendFile, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type AuditIo, type HeadHandle, nodeIo } from '../../app/audit/append.js';
import { recordHash } from '../../app/audit/chain.js';
import { FLUSH_DELAY_MS, HeadWriter, formatHeadSlot, readHead } from '../../app/audit/head.js';
import { verifyAudit } from '../../app/audit/verify.js';
import type { AuditRecord } from '../../app/contract/audit.js';
import { entry, manualClock, useLogs, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();
const openLog = useLogs();
const KEY = 'k'.repeat(64);

/** Four records written by a keyed log, which is then closed (as the terminal finds a log). */
async function written(key: string | undefined = KEY): Promise<{ dir: string; file: string }> {
  const dir = await tempDir();
  const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z'), key });
  for (let i = 1; i <= 4; i++) await log.append(entry({ callId: `c${i}`, params: { n: i } }));
  await log.close();
  return { dir, file: join(dir, '2026-11.jsonl') };
}

async function lines(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split('\n').filter(Boolean);
}

/**
 * What a forger without the key can do: drop every MAC, change the service of the record at
 * `edit`, and recompute each hash from `prevHash` on, so the chain itself holds.
 */
function rechain(
  records: readonly AuditRecord[],
  prevHash: string,
  service: string,
  edit = 0,
): AuditRecord[] {
  let prev = prevHash;
  return records.map((r, k) => {
    const { hash: _h, mac: _m, ...rest } = { ...r, prevHash: prev };
    const edited = k === edit ? { ...rest, service } : rest;
    prev = recordHash(edited as AuditRecord);
    return { ...edited, hash: prev } as AuditRecord;
  });
}

describe('verify against the durable head', () => {
  it('reports an untouched keyed log intact, keyed check done', async () => {
    const { dir } = await written();
    expect(await verifyAudit(dir, { key: KEY })).toEqual({
      ok: true,
      records: 4,
      files: 1,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'checked',
    });
  });

  it('catches the newest record deleted, even by a reader that never saw the log run', async () => {
    const { dir, file } = await written();
    await writeFile(file, `${(await lines(file)).slice(0, 3).join('\n')}\n`);
    expect(await verifyAudit(dir, { key: KEY })).toMatchObject({
      ok: false,
      records: 3,
      firstBadSeq: 4,
      reason: expect.stringMatching(/^records missing at the end/),
    });
    // Without the key the cut is still seen: seq and hash of the head need no key.
    expect(await verifyAudit(dir)).toMatchObject({ ok: false, firstBadSeq: 4, keyCheck: 'no-key' });
  });

  it('catches the newest record replaced by a junk line, and does not call it torn', async () => {
    const { dir, file } = await written();
    const kept = (await lines(file)).slice(0, 3);
    await writeFile(file, `${kept.join('\n')}\n{"seq":4,"junk":true}\n`);
    const result = await verifyAudit(dir, { key: KEY });
    expect(result).toMatchObject({ ok: false, firstBadSeq: 4, tornTail: false });
    expect(!result.ok && result.reason).toMatch(/records missing at the end/);
  });

  it('reports a final line torn by a crash mid-write as torn, not as tampering', async () => {
    const { dir, file } = await written();
    const next = JSON.stringify({ seq: 5, ts: '2026-11-15T10:00:00.000Z', connection: 'home' });
    await appendFile(file, next.slice(0, 40)); // the write the crash cut short
    expect(await verifyAudit(dir, { key: KEY })).toEqual({
      ok: true,
      records: 4,
      files: 1,
      tornLines: 1,
      tornTail: true,
      keyCheck: 'checked',
    });
  });

  it('catches records re-chained by someone without the key', async () => {
    const { dir, file } = await written();
    // Edit record 2 and recompute every hash after it, head included, as a careful forger would.
    const records = (await lines(file)).map((l) => JSON.parse(l) as AuditRecord);
    const forged = [records[0]!, ...rechain(records.slice(1), records[0]!.hash, 'forged')];
    await writeFile(file, `${forged.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const last = forged[forged.length - 1] as AuditRecord;
    // The head's own checksum needs no key either: the forger recomputes it too.
    const head = (await readHead(dir)).head as { seq: number; hash: string; mac?: string };
    await writeFile(join(dir, 'head'), formatHeadSlot({ ...head, hash: last.hash }));

    const keyed = await verifyAudit(dir, { key: KEY });
    expect(keyed).toMatchObject({ ok: false, firstBadSeq: 2, keyCheck: 'checked' });
    expect(!keyed.ok && keyed.reason).toMatch(/keyed/);
    // Without the key the forgery is invisible to the chain, and verify says what it could not do.
    expect(await verifyAudit(dir)).toMatchObject({ keyCheck: 'no-key' });
  });

  it('catches a log stripped of every MAC and re-chained, once the key store says when MACs began', async () => {
    const { dir, file } = await written();
    // The forger drops every MAC (from record 1 on) and the head's, so no record "starts" them.
    const records = (await lines(file)).map((l) => JSON.parse(l) as AuditRecord);
    const forged = rechain(records, '0'.repeat(64), 'get_current_time', 1);
    await writeFile(file, `${forged.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const slot = formatHeadSlot({ seq: 4, hash: forged.at(-1)!.hash });
    await writeFile(join(dir, 'head'), slot + slot);

    // Without knowing when the MACs began, this looks like a log that never had a key.
    expect(await verifyAudit(dir, { key: KEY })).toMatchObject({ ok: true, keyCheck: 'none' });
    const keyed = await verifyAudit(dir, { key: KEY, keyedFrom: 1 });
    // Not one MAC could be checked: verify does not say it checked the keyed chain.
    expect(keyed).toMatchObject({ ok: false, firstBadSeq: 1, keyCheck: 'none' });
    expect(!keyed.ok && keyed.reason).toMatch(/keyed MAC missing/);
  });

  it('a keyed log knows where its MACs begin: at its first record, or the next one it writes', async () => {
    const { dir } = await written();
    const reopened = await openLog({ dir, key: KEY });
    expect(reopened.keyedFrom).toBe(1);
    const old = await tempDir();
    const before = await openLog({ dir: old });
    for (let i = 1; i <= 4; i++) await before.append(entry({ callId: `c${i}` }));
    await before.close();
    const keyedLater = await openLog({ dir: old, key: KEY });
    expect(keyedLater.keyedFrom).toBe(5);
    await keyedLater.append(entry({ callId: 'c5' }));
    // The key cannot vouch for what was written before it: said plainly, never called intact.
    expect(await keyedLater.verify()).toMatchObject({
      ok: false,
      records: 5,
      keyCheck: 'checked',
      firstBadSeq: 1,
      reason: expect.stringMatching(/^records 1–4 were written before the log had its key/),
    });
    const unkeyed = await openLog({ dir: old });
    expect(unkeyed.keyedFrom).toBeUndefined();
  });

  it('a log reopened after a crash between the log write and the head write still verifies', async () => {
    const { dir } = await written();
    const headFile = join(dir, 'head');
    const before = await readFile(headFile);
    const log = await openLog({ dir, clock: manualClock('2026-11-15T11:00:00Z'), key: KEY });
    await log.append(entry({ callId: 'c5' }));
    await log.close();
    await writeFile(headFile, before); // the head write never reached the disk
    expect(await verifyAudit(dir, { key: KEY })).toMatchObject({ ok: true, records: 5 });
  });
});

describe('the head file of a new data folder', () => {
  /** Real head file access whose write into slot 1 waits until released. */
  function slotOneHeld(): { io: AuditIo; reached: Promise<void>; release: () => void } {
    let arrive!: () => void;
    const reached = new Promise<void>((resolve) => (arrive = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const io: AuditIo = {
      ...nodeIo,
      openHead: async (path, first) => {
        const real = await nodeIo.openHead(path, first);
        return {
          write: async (buffer, offset, length, position) => {
            if (position === 256) {
              arrive();
              await gate;
            }
            return real.write(buffer, offset, length, position);
          },
          sync: () => real.sync(),
          close: () => real.close(),
        };
      },
    };
    return { io, reached, release };
  }

  it('shows a reader no damaged head between the two slots of the first head write', async () => {
    const dir = await tempDir();
    const { io, reached, release } = slotOneHeld();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z'), key: KEY, io });
    try {
      const record = await log.append(entry());
      await reached; // slot 0 written and flushed, slot 1 not yet
      // What `audit verify` (or Activity's Verify in another process) finds at that moment.
      expect(await readHead(dir)).toEqual({
        exists: true,
        head: { seq: 1, hash: record.hash, mac: expect.stringMatching(/^[0-9a-f]{64}$/) },
      });
      expect(await verifyAudit(dir, { key: KEY })).toMatchObject({ ok: true, records: 1 });
    } finally {
      release();
    }
    await log.close();
    // Made whole beside the head and renamed into place: nothing of that is left behind.
    expect((await readdir(dir)).sort()).toEqual(['2026-11.jsonl', 'head']);
  });

  it('an existing head file is opened as it is, never made anew', async () => {
    const dir = await tempDir();
    const file = join(dir, 'head');
    await writeFile(file, 'what is there');
    const handle = await nodeIo.openHead(file, formatHeadSlot({ seq: 1, hash: 'a'.repeat(64) }));
    await handle.close();
    expect(await readFile(file, 'utf8')).toBe('what is there');
  });
});

describe('the head file damaged in one slot', () => {
  /** Two records, the head flushed, two more, closed: the head was written at seq 2, then 4. */
  async function twoHeads(): Promise<{ dir: string; file: string; headFile: string }> {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z'), key: KEY });
    for (let i = 1; i <= 4; i++) {
      await log.append(entry({ callId: `c${i}` }));
      if (i === 2) await log.verify(); // flushes the head at seq 2
    }
    await log.close();
    return { dir, file: join(dir, '2026-11.jsonl'), headFile: join(dir, 'head') };
  }

  /** One byte of slot `k` changed, as a write torn by a crash (or someone) leaves it. */
  async function spoil(headFile: string, k: number): Promise<void> {
    const bytes = await readFile(headFile);
    bytes[k * 256 + 2] = 0x58;
    await writeFile(headFile, bytes);
  }

  it('keeps no older head to fall back on: the records cut off after it are still caught', async () => {
    for (const k of [0, 1]) {
      const { dir, file, headFile } = await twoHeads();
      await spoil(headFile, k);
      await writeFile(file, `${(await lines(file)).slice(0, 2).join('\n')}\n`);
      expect(await verifyAudit(dir, { key: KEY })).toMatchObject({
        ok: false,
        firstBadSeq: 3,
        reason: expect.stringMatching(/^records missing at the end/),
      });
    }
  });

  it('reports a damaged slot rather than calling the log intact', async () => {
    const { dir, headFile } = await twoHeads();
    await spoil(headFile, 0);
    const result = await verifyAudit(dir, { key: KEY });
    expect(result).toMatchObject({ ok: false, firstBadSeq: 5, records: 4 });
    expect(!result.ok && result.reason).toMatch(
      /head file's two copies was damaged .*cut short .*whether records after seq 4 were removed cannot be checked/,
    );
    // A head file cut to its first slot is a damaged one too.
    await writeFile(headFile, (await readFile(headFile)).subarray(256, 512));
    expect(await verifyAudit(dir, { key: KEY })).toMatchObject({ ok: false, firstBadSeq: 5 });
  });

  it('a log opened over a damaged slot keeps saying so after its next write repairs the file', async () => {
    const { dir, headFile } = await twoHeads();
    await spoil(headFile, 1);
    const log = await openLog({ dir, clock: manualClock('2026-11-15T11:00:00Z'), key: KEY });
    expect(log.headDamagedAt).toBe(4);
    await log.append(entry({ callId: 'c5' }));
    expect(await log.verify()).toMatchObject({
      ok: false,
      firstBadSeq: 5,
      reason: expect.stringMatching(/damaged when the agent last started/),
    });
    await log.close();
    // Rewritten whole by that write: the next start finds nothing wrong with it.
    expect(await verifyAudit(dir, { key: KEY })).toMatchObject({ ok: true, records: 5 });
  });
});

describe('the head file under a stream of calls', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** An io whose head flushes wait until released, counting the seqs written. */
  function slowHeadIo(): { io: AuditIo; written: number[]; release: () => void } {
    const written: number[] = [];
    let waiting: (() => void)[] = [];
    let lastPosition = 0;
    // A head goes to both slots in turn: counted once (at slot 0), and it is the second flush
    // (slot 1's) that the disk makes wait.
    const handle: HeadHandle = {
      write: async (buffer, _offset, _length, position) => {
        lastPosition = position;
        if (position === 0)
          written.push((JSON.parse(buffer.toString('utf8')) as { seq: number }).seq);
        return { bytesWritten: buffer.length };
      },
      sync: () =>
        lastPosition === 0
          ? Promise.resolve()
          : new Promise<void>((resolve) => waiting.push(resolve)),
      close: async () => undefined,
    };
    const io: AuditIo = {
      openAppend: () => Promise.reject(new Error('not used')),
      openHead: async () => handle,
      syncDir: async () => undefined,
    };
    const release = (): void => {
      const now = waiting;
      waiting = [];
      for (const resolve of now) resolve();
    };
    return { io, written, release };
  }

  it('is written at most once per delay, not again as soon as the last write lands', async () => {
    vi.useFakeTimers();
    const { io, written, release } = slowHeadIo();
    const head = new HeadWriter(io, '/nowhere', undefined);
    const hash = (n: number): string => n.toString(16).padStart(64, '0');
    head.note(1, hash(1));
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY_MS);
    expect(written).toEqual([1]);
    // Batches keep landing while that write waits for the disk.
    head.note(2, hash(2));
    head.note(3, hash(3));
    release();
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY_MS - 1);
    expect(written).toEqual([1]); // the disk is the log's first: the head waits its turn
    await vi.advanceTimersByTimeAsync(1);
    expect(written).toEqual([1, 3]); // one write for everything noted meanwhile
    release();
    await vi.advanceTimersByTimeAsync(FLUSH_DELAY_MS * 4);
    expect(written).toEqual([1, 3]); // nothing new, nothing written
    head.note(4, hash(4));
    const closing = head.close();
    await vi.advanceTimersByTimeAsync(0);
    release();
    await closing;
    expect(written).toEqual([1, 3, 4]); // a clean close writes the newest at once
  });
});
