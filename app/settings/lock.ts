/**
 * One agent per data folder. Two processes appending to the same audit log would break its hash
 * chain, and two writers of settings would lose each other's changes, so the agent holds
 * `<dataDir>/agent.lock` (its pid) while it runs. A lock left by a process that no longer exists
 * (a crash) is taken over.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';

export interface DataDirLock {
  release(): Promise<void>;
}

/** Whether a process with this pid exists (EPERM: it exists but is not ours). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function lockDataDir(dir: string, pid = process.pid): Promise<DataDirLock> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'agent.lock');
  // pid + a nonce: the pid says who holds it, the nonce says which lock (one process may try twice).
  const mine = `${pid} ${randomBytes(8).toString('hex')}`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(file, 'wx', 0o600);
      await handle.writeFile(`${mine}\n`);
      await handle.close();
      return {
        release: async () => {
          // Only remove the lock if it is still ours.
          const content = (await readFile(file, 'utf8').catch(() => '')).trim();
          if (content === mine) await rm(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number((await readFile(file, 'utf8').catch(() => '')).trim().split(' ')[0]);
      if (Number.isInteger(owner) && owner > 0 && alive(owner)) {
        throw new Error(
          `another Advent Agent (process ${owner}) is already using ${dir}; close it first, or give this one its own --data-dir`,
        );
      }
      // Stale (its process is gone) or unreadable: take it over.
      await rm(file, { force: true });
    }
  }
  throw new Error(`could not lock ${dir}: the lock file keeps changing`);
}
