import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../../app/agent.js';
import { MemorySecretStore } from '../../app/settings/secrets.js';
import { lockDataDir } from '../../app/settings/lock.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-lock-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The pid of a process that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'console.log(process.pid)']);
  return Number(child.stdout.toString().trim());
}

describe('data folder lock', () => {
  it('refuses a second agent on the same data folder, naming the holder, and frees it on close', async () => {
    const open = () =>
      Agent.open({
        dataDir: dir,
        defaultFilesRoot: path.join(dir, 'files'),
        secrets: new MemorySecretStore(),
      });
    const first = await open();
    await expect(open()).rejects.toThrow(
      `another Advent Agent (process ${process.pid}) is already using ${dir}`,
    );
    await first.close();
    expect(existsSync(path.join(dir, 'agent.lock'))).toBe(false);
    const again = await open();
    await again.close();
  });

  it('takes over a lock left by a process that no longer exists', async () => {
    await writeFile(path.join(dir, 'agent.lock'), `${deadPid()}\n`);
    const lock = await lockDataDir(dir);
    expect((await readFile(path.join(dir, 'agent.lock'), 'utf8')).split(' ')[0]).toBe(
      String(process.pid),
    );
    await lock.release();
  });

  it('does not remove a lock that another process took over meanwhile', async () => {
    const lock = await lockDataDir(dir);
    await writeFile(path.join(dir, 'agent.lock'), '1\n');
    await lock.release();
    expect(existsSync(path.join(dir, 'agent.lock'))).toBe(true);
  });
});
