/**
 * One agent per data folder. Two processes appending to the same audit log would break its hash
 * chain, and two writers of settings would lose each other's changes, so the agent holds
 * `<dataDir>/agent.lock` (its pid) while it runs. A lock left by a process that no longer exists
 * (a crash) is taken over.
 *
 * Every step that changes `agent.lock` is one atomic file system operation, so agents starting
 * together cannot both win:
 * - a new lock appears whole through `link(temp, lock)` (fails if one exists), never as an empty
 *   file another starter could read as unowned;
 * - a stale lock is replaced, never removed first: the one starter that manages to create the
 *   claim `agent.lock.claim-<hash of the stale content>` (a hard link, so exclusive) renames its
 *   own lock over it. The others see the claim taken, wait, and find the winner's live lock.
 */
import { createHash, randomBytes } from 'node:crypto';
import { link, lstat, mkdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface DataDirLock {
  release(): Promise<void>;
}

/** Starting agents retry this often before giving up on a lock that keeps changing hands. */
const ATTEMPTS = 200;
/** A claim older than this was left by a starter that crashed mid-takeover; it is cleared. */
const ABANDONED_CLAIM_MS = 10_000;

/** Whether a process with this pid exists (EPERM: it exists but is not ours). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const code = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if (code(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/** The pid in a lock's text ("pid nonce"), when it names a process that is alive. */
function liveOwner(text: string): number | undefined {
  const owner = Number(text.trim().split(' ')[0]);
  return Number.isInteger(owner) && owner > 0 && alive(owner) ? owner : undefined;
}

/** The live process holding `dir`'s lock, if any (an `mcp` waits for such an agent to answer). */
export async function lockHolder(dir: string): Promise<number | undefined> {
  const text = await readText(path.join(dir, 'agent.lock')).catch(() => undefined);
  return text === undefined ? undefined : liveOwner(text);
}

export async function lockDataDir(dir: string, pid = process.pid): Promise<DataDirLock> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'agent.lock');
  // pid + a nonce: the pid says who holds it, the nonce says which lock (one process may try twice).
  const nonce = randomBytes(8).toString('hex');
  const mine = `${pid} ${nonce}\n`;
  const temp = path.join(dir, `agent.lock.${nonce}.new`);
  const held: DataDirLock = {
    release: async () => {
      // Only remove the lock if it is still ours.
      if ((await readText(file).catch(() => undefined)) === mine) await rm(file, { force: true });
    },
  };
  await writeFile(temp, mine, { mode: 0o600, flag: 'wx' });
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        await link(temp, file);
        return held;
      } catch (err) {
        if (code(err) !== 'EEXIST') throw err;
      }
      const seen = await readText(file);
      if (seen === undefined) continue; // released meanwhile: try again
      const owner = liveOwner(seen);
      if (owner !== undefined) {
        throw new Error(
          `another Advent Agent (process ${owner}) is already using ${dir}; close it first, or give this one its own --data-dir`,
        );
      }
      // Stale (its process is gone) or unreadable: take it over, if this starter wins the claim.
      if (await takeOver(file, seen, temp)) return held;
      await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * 4));
    }
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  throw new Error(`could not lock ${dir}: the lock file keeps changing`);
}

/** Replaces the stale lock whose content is `seen` with `temp`; false when another starter claims it. */
async function takeOver(file: string, seen: string, temp: string): Promise<boolean> {
  const digest = createHash('sha256').update(seen).digest('hex').slice(0, 16);
  const claim = `${file}.claim-${digest}`;
  try {
    await link(file, claim);
  } catch (err) {
    if (code(err) === 'EEXIST') await clearAbandoned(claim);
    else if (code(err) !== 'ENOENT') throw err;
    return false;
  }
  try {
    // The claim links whatever `agent.lock` is now: it must still be the lock judged stale.
    if ((await readText(claim)) !== seen) return false;
    // Nobody else can hold this claim, and a dead owner never releases: the lock is still `seen`.
    await rename(temp, file);
    return true;
  } finally {
    await unlink(claim).catch(() => undefined);
  }
}

async function clearAbandoned(claim: string): Promise<void> {
  try {
    const { ctimeMs } = await lstat(claim);
    if (Date.now() - ctimeMs > ABANDONED_CLAIM_MS) await unlink(claim);
  } catch {
    // Gone already: the claimer finished.
  }
}
