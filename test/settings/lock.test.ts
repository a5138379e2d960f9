import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
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

  it('lets exactly one of many simultaneous takeovers of a stale lock win', async () => {
    // Each round: a stale lock, then 16 agents (distinct pids, all alive) start at once.
    const pids = [process.pid, process.ppid, 1];
    for (let round = 0; round < 15; round++) {
      await writeFile(path.join(dir, 'agent.lock'), `${deadPid()} stale\n`);
      // Staggered by up to 2 ms so the contenders' steps interleave in every order.
      const tries = Array.from({ length: 16 }, async (_, k) => {
        await new Promise((r) => setTimeout(r, Math.random() * 2));
        return lockDataDir(dir, pids[k % pids.length]).then(
          (lock) => ({ lock }),
          (err: Error) => ({ err }),
        );
      });
      const outcomes = await Promise.all(tries);
      const winners = outcomes.filter((o) => 'lock' in o);
      expect(winners).toHaveLength(1);
      for (const o of outcomes)
        if ('err' in o) expect(o.err.message).toMatch(/already using|keeps changing/);
      await (winners[0] as { lock: { release(): Promise<void> } }).lock.release();
      // Nothing of the takeover is left behind but the folder itself.
      expect((await readdir(dir)).filter((n) => n.startsWith('agent.lock'))).toEqual([]);
    }
  });
});

describe('data folder mode', () => {
  it.runIf(process.platform !== 'win32')(
    'tightens an existing data folder readable by others to 0700 and says so',
    async () => {
      const data = path.join(dir, 'data');
      await mkdir(data);
      await chmod(data, 0o755);
      const agent = await Agent.open({
        dataDir: data,
        defaultFilesRoot: path.join(dir, 'files'),
        secrets: new MemorySecretStore(),
      });
      try {
        expect((await stat(data)).mode & 0o777).toBe(0o700);
        expect(agent.startupNotices.map((n) => n.message).join('\n')).toMatch(/0755.*0700/);
      } finally {
        await agent.close();
      }
    },
  );
});

describe('notices found while opening', () => {
  it('carry words a window translates: a damaged settings file, a damaged reminders file, an open data folder', async () => {
    const data = path.join(dir, 'data');
    await mkdir(data);
    await writeFile(path.join(data, 'settings.json'), '{"theme": ');
    await writeFile(path.join(data, 'reminders.json'), '{"reminders": [tru');
    const posix = process.platform !== 'win32';
    if (posix) await chmod(data, 0o755);
    const agent = await Agent.open({
      dataDir: data,
      defaultFilesRoot: path.join(dir, 'files'),
      secrets: new MemorySecretStore(),
    });
    try {
      const byKey = new Map(agent.startupNotices.map((n) => [n.words?.key, n]));
      const settings = byKey.get('notice.settingsNotJson');
      expect(settings?.message).toMatch(/default settings are in use/);
      expect(settings?.words?.params).toMatchObject({
        file: path.join(data, 'settings.json'),
        keptAs: expect.stringContaining(path.join(data, 'settings.json.corrupt-')),
      });
      const reminders = byKey.get('notice.remindersSetAside');
      expect(reminders?.message).toMatch(/reminders file was damaged/);
      expect(reminders?.words?.params).toEqual({
        keptAs: expect.stringContaining(path.join(data, 'reminders.json.corrupt-')),
      });
      if (posix) {
        const mode = byKey.get('notice.dataDirMadePrivate');
        expect(mode?.message).toMatch(/0755.*0700/);
        expect(mode?.words?.params).toEqual({ dir: data, mode: '0755' });
      }
      // Every one of them, not only these.
      expect(agent.startupNotices.every((n) => n.words !== undefined)).toBe(true);
    } finally {
      await agent.close();
    }
  });
});
