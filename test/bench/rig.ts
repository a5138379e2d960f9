/**
 * What the round-trip benchmarks share: the call they time, where the audit log goes, an Agent in
 * a temp data dir, and timing a call sequentially or in batches. A "call" here is one function
 * that sends get_current_time from a simulator and throws unless the result says it succeeded,
 * so a timing is never of a failed call.
 */
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Agent, type AgentOptions } from '../../app/agent.js';
import { MemorySecretStore } from '../../app/settings/secrets.js';
import { FAST } from '../helpers/agent-harness.js';
import { fsTypeOf, nowMs } from './stats.js';

export const METHOD = 'get_current_time';
export const PARAMS = { format: 'simple' };

export interface Medium {
  /** 'disk' (os.tmpdir()) or 'tmpfs' (/dev/shm). */
  name: 'disk' | 'tmpfs';
  base: string;
  fsType: string | undefined;
}

export function media(): Medium[] {
  const out: Medium[] = [{ name: 'disk', base: os.tmpdir(), fsType: fsTypeOf(os.tmpdir()) }];
  if (process.platform === 'linux' && existsSync('/dev/shm')) {
    out.push({ name: 'tmpfs', base: '/dev/shm', fsType: fsTypeOf('/dev/shm') });
  }
  return out;
}

/**
 * An Agent with its data dir (and so its audit log) in a fresh temp dir under `base`, memory
 * secrets and the tests' FAST timing. The caller removes `dir` after closing the agent.
 */
/** A call pace the bench never reaches (the pace's own check is still made on every call). */
export const BENCH_PACE = { burst: 1_000_000, perSecond: 1_000_000 };

export async function openAgent(
  base: string,
  extra: Partial<AgentOptions> = {},
): Promise<{ dir: string; agent: Agent }> {
  const dir = await mkdtemp(path.join(base, 'advent-bench-'));
  const agent = await Agent.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    timing: FAST,
    ...extra,
    // The bench sends thousands of calls through one connection: the pace would be all it measured.
    overrides: { callPace: BENCH_PACE, ...extra.overrides },
  });
  return { dir, agent };
}

/** Resolves when connection `id` of `agent` (any, when omitted) reports `ready`. Listen first, then connect. */
export function whenReady(agent: Agent, id?: string, timeoutMs = 10_000): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the agent's connection ${id ?? ''} did not become ready`)),
      timeoutMs,
    );
    const off = agent.events.on('connection', (e) => {
      if (e.state.status !== 'ready' || (id !== undefined && e.id !== id)) return;
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

/** One call from a simulator through the agent and back; throws unless it succeeded. */
export type Call = () => Promise<void>;

/** The time of one call, send to checked result, in ms. */
export async function timeCall(call: Call): Promise<number> {
  const t0 = nowMs();
  await call();
  return nowMs() - t0;
}

/** `n` calls one after another; the time of each. */
export async function sequential(call: Call, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await timeCall(call));
  return out;
}

/**
 * `n` calls issued `batch` at a time. Like `peer.callMany` (which is `Promise.all` over
 * `peer.call`), but each call keeps its own send-to-result time.
 */
export async function concurrent(call: Call, n: number, batch: number): Promise<number[]> {
  const out: number[] = [];
  for (let done = 0; done < n; done += batch) {
    const k = Math.min(batch, n - done);
    out.push(...(await Promise.all(Array.from({ length: k }, () => timeCall(call)))));
  }
  return out;
}
