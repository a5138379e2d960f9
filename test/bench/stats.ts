/**
 * Small measuring helpers shared by the benchmarks. Nothing here judges a number: the bench
 * reports, it never fails on timing.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';

const gcFn = (globalThis as { gc?: () => void }).gc;

/** Whether `--expose-gc` gave us a real collector to call. */
export const hasGc = typeof gcFn === 'function';

/** A full collection (twice: the first pass may only queue finalisers). No-op without --expose-gc. */
export function collect(): void {
  if (!gcFn) return;
  gcFn();
  gcFn();
}

/** Milliseconds since an arbitrary origin, sub-microsecond resolution. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Nearest-rank percentile of `sorted` (ascending), p in (0, 1]. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length)));
  return sorted[rank - 1]!;
}

export function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

export interface Latency {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export function latency(samples: readonly number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    mean: sum / sorted.length,
  };
}

export const MiB = 1024 * 1024;
export const KiB = 1024;

/** Bytes as MiB/KiB for labels. */
export function size(bytes: number): string {
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes >= MiB) return `${(bytes / MiB).toFixed(1)} MiB`;
  if (bytes % KiB === 0) return `${bytes / KiB} KiB`;
  return `${(bytes / KiB).toFixed(1)} KiB`;
}

export interface Memory {
  rssMB: number;
  heapUsedMB: number;
}

/**
 * Memory after a full collection (when available), in MB (10^6 bytes). Taken after a turn of the
 * event loop, so values the caller just let go of are not still held by its suspended frame.
 */
export async function memory(): Promise<Memory> {
  await new Promise((resolve) => setImmediate(resolve));
  collect();
  const m = process.memoryUsage();
  return { rssMB: m.rss / 1e6, heapUsedMB: m.heapUsed / 1e6 };
}

export interface Machine {
  cpu: string;
  cores: number;
  memoryGB: number;
  node: string;
  platform: string;
  date: string;
  /**
   * How an idle CPU waits (Linux: the cpuidle driver, and for `haltpoll` how long a guest vCPU polls
   * before it halts): code that runs after a sleep, such as the wait for a disk flush, pays for it.
   */
  idle?: string;
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() || 'unknown',
    cores: cpus.length,
    memoryGB: os.totalmem() / 1e9,
    node: process.version,
    platform: `${process.platform} ${os.release()} (${process.arch})`,
    date: new Date().toISOString(),
    idle: idleDriver(),
  };
}

function idleDriver(): string | undefined {
  const read = (file: string): string | undefined => {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  const driver = read('/sys/devices/system/cpu/cpuidle/current_driver');
  if (!driver) return undefined;
  const pollNs = read('/sys/module/haltpoll/parameters/guest_halt_poll_ns');
  return driver === 'haltpoll' && pollNs !== undefined
    ? `${driver} (a virtual machine's vCPU; it polls ${pollNs} ns before it halts and leaves the guest)`
    : driver;
}

/** The file system type `dir` lives on (Linux: from /proc/mounts), or undefined when unknown. */
export function fsTypeOf(dir: string): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    let best: { mount: string; type: string } | undefined;
    for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
      const [, mount, type] = line.split(' ');
      if (!mount || !type) continue;
      const inside = dir === mount || dir.startsWith(mount.endsWith('/') ? mount : `${mount}/`);
      if (inside && (!best || mount.length > best.mount.length)) best = { mount, type };
    }
    return best?.type;
  } catch {
    return undefined;
  }
}

/**
 * Untimed calls before each part is timed alone, the same for every part (the bare SDK server's
 * included): the agent runs for hours, so its steady state, after the JIT has optimised the path,
 * is what is compared.
 */
export const PART_WARMUP = 2000;
