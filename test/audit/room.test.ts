import { appendFile, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOM_BYTES } from '../../app/audit/append.js';
import { AuditLog } from '../../app/audit/log.js';
import { changedIo, entry, logText, manualClock, useLogs, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();
const openLog = useLogs();
const NOV = '2026-11-15T10:00:00Z';

/** A log in `dir` with `n` records, closed: its month file holds exactly those lines. */
async function closedLog(dir: string, n: number): Promise<string> {
  const log = await AuditLog.open({ dir, clock: manualClock(NOV) });
  for (let i = 0; i < n; i++) await log.append(entry({ callId: `c${i}` }));
  await log.close();
  return join(dir, '2026-11.jsonl');
}

describe('the room past the audit log’s end', () => {
  it('writes records over room made ready, so a record’s flush does not grow the file', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: manualClock(NOV) });
    const file = join(dir, '2026-11.jsonl');
    const first = await log.append(entry({ callId: 'first' }));
    const size = (await stat(file)).size;
    expect(size).toBe(Buffer.byteLength(`${JSON.stringify(first)}\n`) + ROOM_BYTES);
    const later = [];
    for (let i = 0; i < 20; i++) {
      later.push(await log.append(entry({ callId: `c${i}` })));
      expect((await stat(file)).size).toBe(size);
    }
    expect((await logText(file)).split('\n')).toEqual(
      [first, ...later].map((r) => JSON.stringify(r)).concat(''),
    );
    // Another reader (the terminal's `audit --verify`) passes over the room as blank lines.
    expect(await log.verify()).toMatchObject({ ok: true, records: 21, tornLines: 0 });
  });

  it('makes more room with the batch that reaches past it, in the same write and flush', async () => {
    const dir = await tempDir();
    let writes = 0;
    let syncs = 0;
    const io = changedIo((real) => ({
      write: (...a) => ((writes += 1), real.write(...a)),
      sync: () => ((syncs += 1), real.sync()),
    }));
    const log = await openLog({ dir, clock: manualClock(NOV), io });
    const file = join(dir, '2026-11.jsonl');
    // Records are bounded (a message is cut), so it takes a few thousand to pass the room twice.
    const records = await Promise.all(
      Array.from({ length: 6000 }, (_, i) =>
        log.append(entry({ message: `${'x'.repeat(300)}${i}` })),
      ),
    );
    const text = await logText(file);
    expect(text.split('\n')).toEqual(records.map((r) => JSON.stringify(r)).concat(''));
    const size = (await stat(file)).size;
    expect(size).toBeGreaterThan(Buffer.byteLength(text));
    expect(size).toBeLessThanOrEqual(Buffer.byteLength(text) + ROOM_BYTES);
    expect(size).toBeGreaterThan(2 * ROOM_BYTES);
    // One write and one flush per batch: the room comes with a batch, never on its own.
    expect(writes).toBe(syncs);
  });

  for (const code of ['ENOSPC', 'EDQUOT', 'EFBIG'])
    it(`still takes the records when the room does not fit (${code})`, async () => {
      const dir = await tempDir();
      const space = 64 * 1024; // what the disk has left: records fit, the room does not
      const io = changedIo((real) => ({
        write: async (buffer, offset, length, position) => {
          const fits = Math.max(0, Math.min(length, space - position));
          if (fits < length) {
            await real.write(buffer, offset, fits, position);
            throw Object.assign(new Error(`${code}: simulated`), { code });
          }
          return real.write(buffer, offset, length, position);
        },
      }));
      const log = await openLog({ dir, clock: manualClock(NOV), io });
      const records = [];
      for (let i = 0; i < 10; i++) records.push(await log.append(entry({ callId: `c${i}` })));
      const file = join(dir, '2026-11.jsonl');
      expect(await readFile(file, 'utf8')).toBe(
        records.map((r) => `${JSON.stringify(r)}\n`).join(''),
      );
      expect(await log.verify()).toMatchObject({ ok: true, records: 10, tornLines: 0 });
    });

  it('cuts the room when it closes, so a closed log holds exactly its records', async () => {
    const dir = await tempDir();
    const file = await closedLog(dir, 3);
    const text = await readFile(file, 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.split('\n')).toHaveLength(4);
  });

  it('after a crash, goes on right after the last record, over the room the crash left', async () => {
    const dir = await tempDir();
    const file = await closedLog(dir, 2);
    const records = (await readFile(file, 'utf8')).split('\n').slice(0, 2);
    // A crash leaves the room behind: newlines, or NULs where a file system lost its bytes.
    await appendFile(file, `${'\n'.repeat(5000)}${'\0'.repeat(3000)}\n\n`);
    const log = await openLog({ dir, clock: manualClock(NOV) });
    const next = await log.append(entry({ callId: 'after' }));
    expect(next.seq).toBe(3);
    await log.close();
    expect(await readFile(file, 'utf8')).toBe(`${[...records, JSON.stringify(next)].join('\n')}\n`);
    expect(await (await AuditLog.open({ dir })).verify()).toMatchObject({
      ok: true,
      records: 3,
      tornLines: 0,
      tornTail: false,
    });
  });

  it('keeps a record half written over the room by a crash as a torn line of its own', async () => {
    const dir = await tempDir();
    const file = await closedLog(dir, 2);
    const text = await readFile(file, 'utf8');
    // The crash came mid-write: the start of a third record, then the room it was written over.
    await writeFile(file, `${text}{"seq":3,"ts":"2026-11-15T10:0${'\n'.repeat(4000)}`);
    const log = await openLog({ dir, clock: manualClock(NOV) });
    const next = await log.append(entry({ callId: 'after' }));
    expect(next.seq).toBe(3);
    await log.close();
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines.slice(2)).toEqual(['{"seq":3,"ts":"2026-11-15T10:0', JSON.stringify(next), '']);
    expect(await (await AuditLog.open({ dir })).verify()).toMatchObject({
      ok: true,
      records: 3,
      tornLines: 1,
      tornTail: false,
    });
  });
  it('a record whose newline a crash lost stays torn, and its seq is not taken twice', async () => {
    const dir = await tempDir();
    const file = await closedLog(dir, 2);
    const [a, b] = (await readFile(file, 'utf8')).split('\n');
    // Record 2 was written but never flushed: its bytes survived, its newline and the room after
    // it read back as NULs. Readers take that line as torn, so the log ends at record 1.
    await writeFile(file, `${a}\n${b}${'\0'.repeat(3000)}`);
    const log = await openLog({ dir, clock: manualClock(NOV) });
    const next = await log.append(entry({ callId: 'after' }));
    expect(next.seq).toBe(2);
    await log.close();
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines).toEqual([a, `${b}\0`, JSON.stringify(next), '']);
    expect(await (await AuditLog.open({ dir })).verify()).toMatchObject({
      ok: true,
      records: 2,
      tornLines: 1,
    });
  });

  it('a record whose predecessor a power cut lost is torn, not a gap in the chain', async () => {
    // The same five records in two logs: one keeps all five, one was acknowledged up to 3.
    const five = await closedLog(await tempDir(), 5);
    const records = (await readFile(five, 'utf8')).split('\n');
    const dir = await tempDir();
    const file = await closedLog(dir, 3);
    // Records 4 and 5 went in one batch over the room; the sector holding 4 was lost (it reads as
    // the room's NULs), the one holding 5 was kept.
    const lost = '\0'.repeat(Buffer.byteLength(records[3]!) + 1);
    await appendFile(file, `${lost}${records[4]}\n${'\0'.repeat(4000)}`);
    const log = await openLog({ dir, clock: manualClock(NOV) });
    const next = await log.append(entry({ callId: 'after' }));
    expect(next.seq).toBe(4);
    await log.close();
    expect(await (await AuditLog.open({ dir })).verify()).toMatchObject({
      ok: true,
      records: 4,
      tornLines: 1,
    });
  });

  it('a whole record a failed append left without its newline is never followed by its seq again', async () => {
    const dir = await tempDir();
    let failing = false;
    const eio = () => Object.assign(new Error('EIO: simulated'), { code: 'EIO' });
    // The append that makes the room lands all of its record but the newline, then the disk
    // fails, and cannot cut it back either.
    const io = changedIo((real) => ({
      write: async (buffer, offset, length, position) => {
        if (!failing) return real.write(buffer, offset, length, position);
        const line = buffer.indexOf(0x0a, offset);
        await real.write(buffer, offset, line - offset, position);
        throw eio();
      },
      truncate: (n) => (failing ? Promise.reject(eio()) : real.truncate(n)),
    }));
    const first = await AuditLog.open({ dir, clock: manualClock(NOV) });
    const a = await first.append(entry({ callId: 'a' }));
    await first.close(); // the room is cut: the next append makes new room
    const log = await openLog({ dir, clock: manualClock(NOV), io });
    failing = true;
    await expect(log.append(entry({ callId: 'lost' }))).rejects.toThrow(/input\/output error/);
    // The leftover is a whole record: while it cannot be cut, nothing is appended after it.
    await expect(log.append(entry({ callId: 'lost2' }))).rejects.toThrow(/input\/output error/);
    failing = false;
    const b = await log.append(entry({ callId: 'after' }));
    expect(b).toMatchObject({ seq: 2, prevHash: a.hash });
    expect(await log.verify()).toMatchObject({ ok: true, records: 2 });
  });
});
