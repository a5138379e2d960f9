import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { systemClock, type Clock } from '../../app/clock.js';
import type { ConnectionRef } from '../../app/contract/connection.js';
import type { FilesSandbox } from '../../app/services/files/sandbox.js';
import { Registry } from '../../app/services/registry.js';
import { ServiceFailure, type Service, type ServiceContext } from '../../app/services/service.js';

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

export function context(
  files: FilesSandbox,
  clock: Clock = systemClock,
  connection: ConnectionRef = { id: 'test', name: 'test' },
): ServiceContext {
  return {
    signal: new AbortController().signal,
    callId: 'call_001',
    connection,
    files,
    clock,
  };
}

/** The refusal a promise ends with; fails the test if it succeeds or throws anything else. */
export async function refusal(promise: Promise<unknown>): Promise<ServiceFailure> {
  const err: unknown = await promise.then(
    () => new Error('expected a refusal, got success'),
    (e: unknown) => e,
  );
  if (err instanceof ServiceFailure) return err;
  throw err;
}

/** The gate's own params check for one service (the registry's ajv validator). */
export function paramsCheck(service: Service<never>) {
  const registry = new Registry();
  registry.add(service as unknown as Service);
  return (params: unknown) => registry.validate(service.name, params);
}
