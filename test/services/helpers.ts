import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { systemClock, type Clock } from '../../app/clock.js';
import type { FilesSandbox } from '../../app/services/files/sandbox.js';
import type { ServiceContext } from '../../app/services/service.js';

/** Real temp folders, removed after each test by the returned cleanup. */
export function tempDirs() {
  const made: string[] = [];
  return {
    async make(prefix = 'advent-services-'): Promise<string> {
      // realpath: macOS tmpdir is a symlink (/var → /private/var); tests compare real paths.
      const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
      made.push(dir);
      return dir;
    },
    async cleanup(): Promise<void> {
      await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
    },
  };
}

export function fixedClock(ms: number): Clock {
  return { ...systemClock, now: () => ms };
}

export function context(files: FilesSandbox, clock: Clock = systemClock): ServiceContext {
  return {
    signal: new AbortController().signal,
    callId: 'call_001',
    connection: { id: 'test', name: 'test' },
    files,
    clock,
  };
}
