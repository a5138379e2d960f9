import { appendFile, mkdir, readFile, readdir, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { nodeIo, type AppendHandle, type AuditIo } from '../../app/audit/append.js';
import { GENESIS_HASH, recordHash } from '../../app/audit/chain.js';
import { MASK, canonicalJson, sha256Hex } from '../../app/audit/redact.js';
import type { AuditRecord } from '../../app/contract/audit.js';
import { changedIo, entry, logText, manualClock, useLogs, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();
const openLog = useLogs();

/** The lines of a month file, up to the log's end (not the room an open log keeps after it). */
async function lines(path: string): Promise<string[]> {
  return (await logText(path)).split('\n');
}

/** The month files in `dir` (the head file beside them is written a moment later: head.ts). */
async function monthFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.endsWith('.jsonl')).sort();
}

describe('AuditLog append', () => {
  it('starts the chain at seq 1 from the genesis hash and hashes the record without its hash', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    const r = await log.append(entry({ params: { b: 2, a: 1 } }));
    expect(r.seq).toBe(1);
    expect(r.prevHash).toBe(GENESIS_HASH);
    const { hash, ...rest } = r;
    expect(hash).toBe(sha256Hex(canonicalJson(rest)));
    const [line] = await lines(join(dir, '2026-11.jsonl'));
    expect(JSON.parse(line as string)).toEqual(r);
  });

  it('chains across a month boundary into a new file', async () => {
    const dir = await tempDir();
    const clock = manualClock('2026-11-30T23:59:59.900Z');
    const log = await openLog({ dir, clock });
    const nov = await log.append(entry({ callId: 'nov' }));
    clock.set('2026-12-01T00:00:00.100Z');
    const dec = await log.append(entry({ callId: 'dec' }));

    expect(await monthFiles(dir)).toEqual(['2026-11.jsonl', '2026-12.jsonl']);
    expect(dec.seq).toBe(nov.seq + 1);
    expect(dec.prevHash).toBe(nov.hash);
    expect(await lines(join(dir, '2026-12.jsonl'))).toEqual([JSON.stringify(dec), '']);
    expect(await log.verify()).toEqual({
      ok: true,
      records: 2,
      files: 2,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'none',
    });
  });

  it('never moves back to an older month file when the clock is set back', async () => {
    const dir = await tempDir();
    const clock = manualClock('2026-12-01T00:00:01Z');
    const log = await openLog({ dir, clock });
    await log.append(entry());
    clock.set('2026-11-30T23:59:00Z');
    await log.append(entry());
    expect(await monthFiles(dir)).toEqual(['2026-12.jsonl']);
    expect((await log.verify()).ok).toBe(true);
  });

  it('continues seq and chain after a reopen', async () => {
    const dir = await tempDir();
    const clock = manualClock('2026-11-15T10:00:00Z');
    const first = await openLog({ dir, clock });
    await first.append(entry({ callId: 'a' }));
    const b = await first.append(entry({ callId: 'b' }));
    await first.close();

    clock.set('2027-01-02T00:00:00Z');
    const second = await openLog({ dir, clock });
    expect(second.stats()).toEqual({ records: 2, files: 1, tornLines: 0 });
    const c = await second.append(entry({ callId: 'c' }));
    expect(c.seq).toBe(3);
    expect(c.prevHash).toBe(b.hash);
    expect((await second.query({ order: 'asc' })).records.map((r) => r.callId)).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(await second.verify()).toMatchObject({ ok: true, records: 3, files: 2 });
  });

  it('skips a torn last line on open and starts the next record on a fresh line', async () => {
    const dir = await tempDir();
    const clock = manualClock('2026-11-15T10:00:00Z');
    const first = await openLog({ dir, clock });
    await first.append(entry({ callId: 'a' }));
    const b = await first.append(entry({ callId: 'b' }));
    await first.close();
    const file = join(dir, '2026-11.jsonl');
    await appendFile(file, '{"seq":3,"ts":"2026-11-15T10:0'); // the crash: no newline

    const second = await openLog({ dir, clock });
    expect(second.stats()).toEqual({ records: 2, files: 1, tornLines: 1 });
    const c = await second.append(entry({ callId: 'c' }));
    expect(c.seq).toBe(3);
    expect(c.prevHash).toBe(b.hash);

    const text = await lines(file);
    expect(text[2]).toBe('{"seq":3,"ts":"2026-11-15T10:0');
    expect(text[3]).toBe(JSON.stringify(c));
    const third = await openLog({ dir, clock });
    expect(third.stats()).toEqual({ records: 3, files: 1, tornLines: 1 });
    expect(await third.verify()).toEqual({
      ok: true,
      records: 3,
      files: 1,
      tornLines: 1,
      tornTail: false,
      keyCheck: 'none',
    });
  });

  it('keeps a record whose newline was lost in the crash and chains after it', async () => {
    const dir = await tempDir();
    const clock = manualClock('2026-11-15T10:00:00Z');
    const first = await openLog({ dir, clock });
    await first.append(entry());
    await first.close();
    const file = join(dir, '2026-11.jsonl');
    await writeFile(file, (await readFile(file, 'utf8')).trimEnd());

    const second = await openLog({ dir, clock });
    expect(second.stats()).toMatchObject({ records: 1, tornLines: 0 });
    await second.append(entry());
    expect(await second.verify()).toEqual({
      ok: true,
      records: 2,
      files: 1,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'none',
    });
  });

  it('never rewrites what is already in the file', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    const file = join(dir, '2026-11.jsonl');
    let before = '';
    for (let i = 0; i < 5; i++) {
      await log.append(entry({ callId: `c${i}` }));
      const now = await logText(file);
      expect(now.startsWith(before)).toBe(true);
      before = now;
    }
  });

  it('keeps call order, seq and chain for concurrent appends', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => log.append(entry({ callId: `c${i}` }))),
    );
    expect(results.map((r) => r.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    for (let i = 1; i < results.length; i++) {
      expect(results[i]?.prevHash).toBe(results[i - 1]?.hash);
    }
    const onDisk = (await lines(join(dir, '2026-11.jsonl')))
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as AuditRecord).callId);
    expect(onDisk).toEqual(results.map((r) => r.callId));
    expect((await log.verify()).ok).toBe(true);
  });

  it('stores redacted params with the sha256 of the full params', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    const long = 'a'.repeat(1000);
    const full1 = { path: 'notes.txt', content: `${long}1`, token: 'sk-secret-1' };
    const full2 = { path: 'notes.txt', content: `${long}2`, token: 'sk-secret-2' };
    const r1 = await log.append(entry({ service: 'create_file', params: full1 }));
    const r2 = await log.append(entry({ service: 'create_file', params: full2 }));

    expect(r1.params).toEqual({
      path: 'notes.txt',
      content: `${'a'.repeat(200)}…(+801 chars)`,
      token: MASK,
    });
    expect(r2.params).toEqual(r1.params);
    expect(r1.paramsSha256).toBe(sha256Hex(canonicalJson(full1)));
    expect(r2.paramsSha256).toBe(sha256Hex(canonicalJson(full2)));
    expect(r1.paramsSha256).not.toBe(r2.paramsSha256);
    const disk = await readFile(join(dir, '2026-11.jsonl'), 'utf8');
    expect(disk).not.toContain('sk-secret');
    expect(disk).not.toContain(long);
  });

  it('masks in the message what redaction masked in the params, before cutting it', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    const params = {
      dsn: 'postgres://admin:Hunter2-DB-pass@db.internal/prod',
      auth: { api_key: 'sk-live-ABCDEF123456' },
      pin: '1234',
    };
    // A tool's error text that echoes its input, long enough to be cut after the secrets.
    const message = `could not connect to ${params.dsn} with key ${params.auth.api_key} (pin 1234) ${'x'.repeat(2000)}`;
    const r = await log.append(
      entry({ outcome: 'error', error: 'sk-live-ABCDEF123456', message, params }),
    );
    expect(r.message).toMatch(
      /^could not connect to postgres:\/\/admin:\*\*\*@db\.internal\/prod with key \*\*\* \(pin 1234\) x+…/,
    );
    expect(r.error).toBe(MASK);
    const disk = await readFile(join(dir, '2026-11.jsonl'), 'utf8');
    expect(disk).not.toContain('Hunter2');
    expect(disk).not.toContain('ABCDEF123456');
  });

  it('fills a missing or unparseable ts from the clock and normalizes the rest to UTC', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    expect((await log.append(entry({ ts: '' }))).ts).toBe('2026-11-15T10:00:00.000Z');
    expect((await log.append(entry({ ts: 'soon' }))).ts).toBe('2026-11-15T10:00:00.000Z');
    expect((await log.append(entry({ ts: '2026-11-15T12:00:00+02:00' }))).ts).toBe(
      '2026-11-15T10:00:00.000Z',
    );
  });

  it('rejects an entry with an unknown decision without touching the chain', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    const a = await log.append(entry());
    await expect(log.append(entry({ decision: 'maybe' as never }))).rejects.toThrow(
      /unknown decision "maybe"/,
    );
    const b = await log.append(entry());
    expect(b).toMatchObject({ seq: 2, prevHash: a.hash });
  });

  it('tells listeners about each written record until they unsubscribe', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    const seen: number[] = [];
    const off = log.onAppend((r) => seen.push(r.seq));
    log.onAppend(() => {
      throw new Error('a broken listener must not break the log');
    });
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    let reported = 0;
    try {
      await log.append(entry());
      await log.append(entry());
      off();
      await log.append(entry());
      reported = consoleError.mock.calls.length;
    } finally {
      consoleError.mockRestore();
    }
    expect(seen).toEqual([1, 2]);
    expect(reported).toBe(3);
  });

  it('flush waits for pending appends and close refuses new ones', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z') });
    void log.append(entry());
    void log.append(entry());
    await log.close();
    expect(log.stats().records).toBe(2);
    await expect(log.append(entry())).rejects.toThrow(/is closed/);
  });
});

describe('AuditLog write failures', () => {
  it('rejects with the file and reason when the month file cannot be opened, then chains on', async () => {
    const dir = await tempDir();
    const clock = manualClock('2026-11-30T23:00:00Z');
    const log = await openLog({ dir, clock });
    const nov = await log.append(entry());
    const listener: AuditRecord[] = [];
    log.onAppend((r) => listener.push(r));
    const blocked = join(dir, '2026-12.jsonl');
    await mkdir(blocked); // a directory where December's file must go
    clock.set('2026-12-01T01:00:00Z');

    const err = await log.append(entry({ callId: 'lost' })).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toBe(
      `audit log could not be written to ${blocked}: a directory is in the way of the file (EISDIR)`,
    );
    expect(log.stats()).toEqual({ records: 1, files: 1, tornLines: 0 });
    expect(listener).toEqual([]);

    await rmdir(blocked);
    const next = await log.append(entry({ callId: 'next' }));
    expect(next).toMatchObject({ seq: 2, prevHash: nov.hash });
    expect(await log.verify()).toEqual({
      ok: true,
      records: 2,
      files: 2,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'none',
    });
  });

  it('rolls back a half-written record when the disk fills, then chains on', async () => {
    const dir = await tempDir();
    let failNext = false;
    // The log keeps its file open across appends, so the failure is armed per write, not per open.
    const io: AuditIo = {
      ...nodeIo,
      openAppend: async (path) =>
        halfWriteThenFail(await nodeIo.openAppend(path), 'ENOSPC', () => {
          const fail = failNext;
          failNext = false;
          return fail;
        }),
    };
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z'), io });
    const a = await log.append(entry());
    const file = join(dir, '2026-11.jsonl');
    const before = await logText(file);

    failNext = true;
    await expect(log.append(entry({ callId: 'lost' }))).rejects.toThrow(
      `audit log could not be written to ${file}: no space left on device (ENOSPC)`,
    );
    expect(await logText(file)).toBe(before);

    const b = await log.append(entry());
    expect(b).toMatchObject({ seq: 2, prevHash: a.hash });
    expect(await log.verify()).toEqual({
      ok: true,
      records: 2,
      files: 1,
      tornLines: 0,
      tornTail: false,
      keyCheck: 'none',
    });
  });

  it('isolates a fragment it could not roll back on its own line', async () => {
    const dir = await tempDir();
    let failNext = false;
    const io: AuditIo = {
      ...nodeIo,
      openAppend: async (path) => {
        const failing = halfWriteThenFail(await nodeIo.openAppend(path), 'EIO', () => {
          const fail = failNext;
          failNext = false;
          return fail;
        });
        return { ...failing, truncate: () => Promise.reject(new Error('cannot truncate either')) };
      },
    };
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z'), io });
    const a = await log.append(entry());
    failNext = true;
    await expect(log.append(entry())).rejects.toThrow(/input\/output error/);
    const b = await log.append(entry({ callId: 'after' }));
    expect(b).toMatchObject({ seq: 2, prevHash: a.hash });

    const text = await lines(join(dir, '2026-11.jsonl'));
    expect(text).toHaveLength(4); // a, fragment, b, ''
    expect(text[2]).toBe(JSON.stringify(b));
    expect(await log.verify()).toEqual({
      ok: true,
      records: 2,
      files: 1,
      tornLines: 1,
      tornTail: false,
      keyCheck: 'none',
    });
  });

  it('cuts back whole records a failed fsync left when the truncate failed too, before appending', async () => {
    const dir = await tempDir();
    let failing = false;
    const eio = () => Object.assign(new Error('EIO: simulated'), { code: 'EIO' });
    // A failing disk: the write lands, the fsync and then the cut-back both fail.
    const io = changedIo((real) => ({
      sync: () => (failing ? Promise.reject(eio()) : real.sync()),
      truncate: (len) => (failing ? Promise.reject(eio()) : real.truncate(len)),
    }));
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z'), io });
    const a = await log.append(entry());
    const file = join(dir, '2026-11.jsonl');
    const before = await logText(file);

    failing = true;
    await expect(log.append(entry({ callId: 'lost' }))).rejects.toThrow(/input\/output error/);
    // While the leftover cannot be cut, nothing more is appended after it.
    await expect(log.append(entry({ callId: 'lost2' }))).rejects.toThrow(/input\/output error/);
    expect(await readFile(file, 'utf8')).toContain('"lost"');

    failing = false;
    const b = await log.append(entry({ callId: 'after' }));
    expect(b).toMatchObject({ seq: 2, prevHash: a.hash });
    expect(await logText(file)).toBe(`${before}${JSON.stringify(b)}\n`);
    expect(await log.verify()).toMatchObject({ ok: true, records: 2, tornLines: 0 });
  });

  it('refuses to open under a path that is a file, saying why', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'plain'), 'x');
    const bad = join(dir, 'plain', 'audit');
    await expect(openLog({ dir: bad })).rejects.toThrow(
      `audit log directory ${bad} could not be created: part of the path is a file, not a directory (ENOTDIR)`,
    );
  });

  it('a failed write leaves no trace in queries or the hash of later records', async () => {
    const dir = await tempDir();
    let fail = true;
    const io: AuditIo = {
      ...nodeIo,
      openAppend: (path) =>
        fail
          ? Promise.reject(Object.assign(new Error('EACCES'), { code: 'EACCES' }))
          : nodeIo.openAppend(path),
    };
    const log = await openLog({ dir, clock: manualClock('2026-11-15T10:00:00Z'), io });
    await expect(log.append(entry())).rejects.toThrow(/permission denied \(EACCES\)/);
    fail = false;
    const r = await log.append(entry());
    expect(r).toMatchObject({ seq: 1, prevHash: GENESIS_HASH });
    expect(r.hash).toBe(recordHash(r));
    expect((await log.query()).total).toBe(1);
  });
});

/** A handle whose write, when `fail()` says so, lands half the bytes, then fails like a full disk would. */
export function halfWriteThenFail(
  real: AppendHandle,
  code: string,
  fail: () => boolean,
): AppendHandle {
  return {
    stat: () => real.stat(),
    read: (...args) => real.read(...args),
    sync: () => real.sync(),
    truncate: (len) => real.truncate(len),
    close: () => real.close(),
    write: async (buffer, offset, length, position) => {
      if (!fail()) return real.write(buffer, offset, length, position);
      await real.write(buffer, offset, Math.floor(length / 2), position);
      throw Object.assign(new Error(`${code}: simulated`), { code });
    },
  };
}
