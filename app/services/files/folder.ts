import { constants, type BigIntStats } from 'node:fs';
import { lstat, mkdir, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { errorCode } from './locate.js';

/**
 * A folder inside a root, reached without following any link past the root (DESIGN §5: a path
 * checked is not a path opened). Every name the sandbox creates, links, renames, reads or removes
 * is named through a HeldFolder, never through a path string re-resolved from the root.
 *
 * Two ways to hold one, chosen per platform:
 * - `anchored` (Linux): the folder is open (O_DIRECTORY, each step O_NOFOLLOW) and names inside it
 *   go through `/proc/self/fd/N/name`. The kernel resolves that to the very folder the handle
 *   holds, like openat(2): swapping a folder on the way for a link changes nothing we touch.
 * - `checked` (elsewhere): Node has no openat, so the folder is named by its real path and every
 *   step is checked by identity (dev + ino of each folder from the root down, links refused)
 *   before and after each operation. What landed elsewhere is detected and refused, and nothing is
 *   written into it; a swap timed between two checks can still leave an empty file behind.
 */
export type HoldMode = 'anchored' | 'checked';

export interface FileId {
  dev: bigint;
  ino: bigint;
}

export const sameFile = (a: FileId, b: FileId): boolean => a.dev === b.dev && a.ino === b.ino;

/** Why a walk or an identity check stopped: the sandbox turns each into a refusal. */
export class FolderChanged extends Error {
  constructor(
    readonly reason: 'link' | 'not_folder' | 'not_file' | 'missing' | 'moved',
    /** The name (one segment) where it happened. */
    readonly at: string,
  ) {
    super(`${reason} at ${at}`);
    this.name = 'FolderChanged';
  }
}

// Absent on Windows; there the `checked` mode never relies on them.
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** A FIFO opened for reading would block until a writer appears. */
export const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
export const NO_FOLLOW = O_NOFOLLOW;

// A name that vanishes and reappears as fast as we create it would loop forever.
const MAX_ATTEMPTS = 4;
// Turns a `checked` look waits for a folder on the way to come back (see holds).
const SETTLE_ATTEMPTS = 64;

async function lstatId(p: string): Promise<BigIntStats | undefined> {
  try {
    return await lstat(p, { bigint: true });
  } catch {
    return undefined;
  }
}

export class HeldFolder {
  private constructor(
    readonly mode: HoldMode,
    /** Real path as walked (messages, and the names in `checked` mode). */
    readonly path: string,
    readonly id: FileId,
    private readonly handle: FileHandle | undefined,
    /** `checked`: every folder from the root down to this one, with the identity seen. */
    private readonly chain: readonly { path: string; id: FileId }[],
  ) {}

  /** The root itself. Links in the root's own path are the user's choice and are followed. */
  static async openRoot(realRoot: string, mode: HoldMode): Promise<HeldFolder> {
    if (mode === 'anchored') {
      const handle = await open(realRoot, constants.O_RDONLY | O_DIRECTORY);
      try {
        const st = await handle.stat({ bigint: true });
        const id = { dev: st.dev, ino: st.ino };
        return new HeldFolder(mode, realRoot, id, handle, []);
      } catch (err) {
        await handle.close().catch(() => undefined);
        throw err;
      }
    }
    const st = await lstat(realRoot, { bigint: true });
    if (!st.isDirectory()) throw new FolderChanged('not_folder', path.basename(realRoot));
    const id = { dev: st.dev, ino: st.ino };
    return new HeldFolder(mode, realRoot, id, undefined, [{ path: realRoot, id }]);
  }

  private closed = false;

  /** A path naming `name` inside this very folder. */
  at(name: string): string {
    // Once closed, the descriptor number may already name another open file or folder.
    if (this.closed) throw new Error(`the folder ${this.path} is no longer held`);
    return this.handle ? `/proc/self/fd/${this.handle.fd}/${name}` : path.join(this.path, name);
  }

  /** Every folder from the root down to this one is still the one walked. Always so when anchored. */
  async intact(): Promise<boolean> {
    for (const step of this.chain) {
      const st = await lstatId(step.path);
      if (!st || !st.isDirectory() || !sameFile(st, step.id)) return false;
    }
    return true;
  }

  /** Throws `moved` unless the folder is still where it was walked to. */
  async ensureIntact(name: string): Promise<void> {
    if (!(await this.intact())) throw new FolderChanged('moved', name);
  }

  /**
   * `name` in this folder is the object `id` (no link followed). `checked`: the look is taken
   * between two intact checks of the chain, and retried for a few turns while a folder on the
   * way is away (a swap in progress), so a momentary swap is not mistaken for "elsewhere".
   */
  async holds(name: string, id: FileId): Promise<boolean> {
    const attempts = this.handle ? 1 : SETTLE_ATTEMPTS;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setImmediate(resolve));
      if (!(await this.intact())) continue;
      const st = await lstatId(this.at(name));
      if (!(await this.intact())) continue;
      return st !== undefined && sameFile(st, id);
    }
    return false;
  }

  /** A path to `name` by the folder's real path, whatever is on the way now (cleanup only). */
  plainPath(name: string): string {
    return path.join(this.path, name);
  }

  /** What `name` is here, links not followed; undefined when absent. */
  async entry(name: string): Promise<BigIntStats | undefined> {
    return lstatId(this.at(name));
  }

  /**
   * The sub-folder `name`, never through a link. With `create`, a missing one is made here (and
   * only here: mkdir is named through this folder too).
   */
  async child(name: string, create: boolean): Promise<HeldFolder> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const opened = await this.tryChild(name);
      if (opened) return opened;
      if (!create) throw new FolderChanged('missing', name);
      await this.ensureIntact(name);
      try {
        await mkdir(this.at(name));
      } catch (err) {
        if (errorCode(err) !== 'EEXIST') throw err;
      }
    }
    throw new FolderChanged('missing', name);
  }

  /** The child folder, or undefined when nothing has that name. */
  private async tryChild(name: string): Promise<HeldFolder | undefined> {
    const where = path.join(this.path, name);
    if (this.handle) {
      let handle: FileHandle;
      try {
        handle = await open(this.at(name), constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch (err) {
        const code = errorCode(err);
        if (code === 'ENOENT') return undefined;
        if (code === 'ENOTDIR' || code === 'ELOOP') throw await this.notAFolder(name);
        throw err;
      }
      try {
        const st = await handle.stat({ bigint: true });
        return new HeldFolder(this.mode, where, { dev: st.dev, ino: st.ino }, handle, []);
      } catch (err) {
        await handle.close().catch(() => undefined);
        throw err;
      }
    }
    await this.ensureIntact(name);
    const st = await lstatId(where);
    if (!st) return undefined;
    if (!st.isDirectory()) throw await this.notAFolder(name);
    const id = { dev: st.dev, ino: st.ino };
    const next = new HeldFolder(this.mode, where, id, undefined, [
      ...this.chain,
      { path: where, id },
    ]);
    await next.ensureIntact(name);
    return next;
  }

  private async notAFolder(name: string): Promise<FolderChanged> {
    const st = await lstatId(this.at(name));
    return new FolderChanged(st?.isSymbolicLink() ? 'link' : 'not_folder', name);
  }

  /** Make names created here durable (best effort: Windows cannot fsync a folder). */
  async sync(): Promise<void> {
    try {
      if (this.handle) {
        await this.handle.sync();
      } else if (process.platform !== 'win32') {
        const handle = await open(this.path, constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
      }
    } catch {
      // The data itself is fsync'd; losing only the new name on power loss is acceptable.
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.handle?.close().catch(() => undefined);
  }
}

let anchoredWorks: Promise<boolean> | undefined;

/**
 * `anchored` where `/proc/self/fd/N/…` really resolves through the open folder (Linux with /proc
 * mounted), else `checked`. Probed once: a container without /proc falls back, never fails.
 */
export function defaultHoldMode(): Promise<HoldMode> {
  if (process.platform !== 'linux') return Promise.resolve('checked');
  anchoredWorks ??= (async () => {
    try {
      const handle = await open('/', constants.O_RDONLY | O_DIRECTORY);
      try {
        const held = await handle.stat({ bigint: true });
        const seen = await lstat(`/proc/self/fd/${handle.fd}/.`, { bigint: true });
        return sameFile(held, seen);
      } finally {
        await handle.close();
      }
    } catch {
      return false;
    }
  })();
  return anchoredWorks.then((ok) => (ok ? 'anchored' : 'checked'));
}
