import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ramFileSystem } from '../../app/audit/append.js';
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

  it('keeps every record of a log in RAM, in order, verifiable after reopening', async () => {
    // /dev/shm is tmpfs on Linux; elsewhere the same run goes through the disk's path.
    const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
    const dir = await mkdtemp(join(base, 'advent-audit-ram-'));
    dirs.push(dir);
    const key = 'k'.repeat(64);
    const log = await openLog({ dir, key });
    const records = await Promise.all(
      Array.from({ length: 50 }, (_, i) => log.append(entry({ callId: `c${i}` }))),
    );
    for (let i = 0; i < 20; i++) records.push(await log.append(entry({ callId: `s${i}` })));
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 70 }, (_, i) => i + 1));
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
