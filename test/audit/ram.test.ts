import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createNodeIo, ramFileSystem } from '../../app/audit/append.js';
import { AuditLog } from '../../app/audit/log.js';
import { entry, useLogs } from './helpers.js';

const openLog = useLogs();
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('flushing a log kept in RAM', () => {
  it('flushes inline only on the file systems that keep files in memory, and only on Linux', () => {
    expect(ramFileSystem(0x01021994, 'linux')).toBe(true); // tmpfs
    expect(ramFileSystem(0x858458f6, 'linux')).toBe(true); // ramfs
    expect(ramFileSystem(0xef53, 'linux')).toBe(false); // ext4: a disk to wait for
    expect(ramFileSystem(0x9123683e, 'linux')).toBe(false); // btrfs
    expect(ramFileSystem(0x01021994, 'darwin')).toBe(false); // the number means something else
  });

  it('keeps every record of a log flushed inline, in order, verifiable after reopening', async () => {
    // The inline flush taken whatever file system the temp dir is on.
    const dir = await mkdtemp(join(tmpdir(), 'advent-audit-ram-'));
    dirs.push(dir);
    const key = 'k'.repeat(64);
    const asked: string[] = [];
    const io = createNodeIo(async (path) => {
      asked.push(path);
      return true;
    });
    const log = await openLog({ dir, key, io });
    const records = await Promise.all(
      Array.from({ length: 50 }, (_, i) => log.append(entry({ callId: `c${i}` }))),
    );
    for (let i = 0; i < 20; i++) records.push(await log.append(entry({ callId: `s${i}` })));
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 70 }, (_, i) => i + 1));
    // Asked once, when the month file was opened: not per append.
    expect(asked).toHaveLength(1);
    await log.close();
    const again = await AuditLog.open({ dir, key });
    try {
      expect(again.stats().records).toBe(70);
      expect(await again.verify()).toMatchObject({ ok: true, records: 70, keyCheck: 'checked' });
    } finally {
      await again.close();
    }
  });
});
