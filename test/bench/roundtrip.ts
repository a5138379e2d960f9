/**
 * MCP call round trip on loopback: the simulator sends `call` get_current_time, the Agent decodes
 * it, runs it through the gate (lookup, validation, preview, policy "auto", run, audit append +
 * fsync) and sends the `result`, which the simulator decodes, checks and resolves. Simulator and
 * agent share one process and one event loop, so the simulator's own work is in every number.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { Agent, type AgentOptions } from '../../app/agent.js';
import { createNodeIo } from '../../app/audit/append.js';
import { FLUSH_PACE, FlushPace } from '../../app/audit/flush-pace.js';
import { AuditLog } from '../../app/audit/log.js';
import { getCurrentTimeService } from '../../app/services/builtin/get_current_time.js';
import { MemorySecretStore } from '../../app/settings/secrets.js';
import { AdventSim } from '../../sim/advent/server.js';
import type { SimPeer } from '../../sim/advent/peer.js';
import {
  type Call,
  BENCH_PACE,
  METHOD,
  type Medium,
  PARAMS,
  concurrent,
  media,
  openAgent,
  sequential,
  whenReady,
} from './rig.js';
import { type Latency, type Memory, PART_WARMUP, latency, memory, nowMs } from './stats.js';
import {
  auditLineBytes,
  bareMcpRoundTrip,
  benchWriteService,
  busyWaitFlushIo,
  fsyncAlone,
  wakeCost,
} from './gate.js';

export { type Medium, media } from './rig.js';

interface Rig {
  dir: string;
  sim: AdventSim;
  agent: Agent;
  peer: SimPeer;
  /** The pace of the log's flushes on a disk, as the log's own io makes them. */
  pace: CountedPace;
}

/** An Agent (temp data dir, memory secrets, FAST timing) connected to a fresh simulator. */
async function openRig(base: string, extra: Partial<AgentOptions> = {}): Promise<Rig> {
  const pace = new CountedPace();
  const { dir, agent } = await openAgent(base, {
    auditIo: createNodeIo(undefined, () => pace),
    ...extra,
  });
  // No frame log in the simulator: 100 000 recorded frames would be the simulator's memory, not ours.
  const sim = await AdventSim.start({ demo: false, record: false, disconnectCloseMs: 10 });
  const ready = whenReady(agent);
  agent.connectAdvent(
    { id: 'bench', kind: 'advent', name: 'Bench', host: '127.0.0.1', port: sim.port },
    () => 'bench-token',
  );
  await ready;
  return { dir, sim, agent, peer: sim.peer(), pace };
}

async function closeRig(rig: Rig): Promise<void> {
  await rig.agent.close();
  await rig.sim.stop();
  await rm(rig.dir, { recursive: true, force: true });
}

/** get_current_time from the Advent simulator's `peer`, checked. */
export function adventCall(peer: SimPeer): Call {
  return async () => {
    const result = await peer.call(METHOD, PARAMS);
    if (result.success !== true) throw new Error(`${METHOD} failed: ${JSON.stringify(result)}`);
  };
}

export interface LatencyRow {
  medium: Medium;
  mode: 'sequential' | 'concurrent';
  latency: Latency;
  wallMs: number;
  callsPerSec: number;
  /** On a disk: how the audit log's flushes of these calls were made (app/audit/flush-pace.ts). */
  flushes?: FlushCounts;
}

export interface FlushCounts {
  inline: number;
  pool: number;
  /** Flushes of FLUSH_PACE.stallMs or more. */
  stalls: number;
  /** Those of them made inline (the event loop waited), each sending the next coolMs to the pool. */
  inlineStalls: number;
}

/** The log's own pace, counting what it decides and the stalls it sees. */
class CountedPace extends FlushPace {
  counts: FlushCounts = { inline: 0, pool: 0, stalls: 0, inlineStalls: 0 };

  override inline(): boolean {
    const inline = super.inline();
    if (inline) this.counts.inline += 1;
    else this.counts.pool += 1;
    return inline;
  }

  override note(ms: number, inline: boolean): void {
    if (ms >= FLUSH_PACE.stallMs) {
      this.counts.stalls += 1;
      if (inline) this.counts.inlineStalls += 1;
    }
    super.note(ms, inline);
  }
}

export interface Component {
  label: string;
  medium?: Medium['name'];
  latency: Latency;
}

export interface MemoryResult {
  medium: Medium;
  calls: number;
  /** What the calls between the two readings were (the tmpfs latency runs are among them). */
  how: string;
  wallMs: number;
  before: Memory;
  after: Memory;
  /** After closing both and letting go of the simulator. */
  withoutSim: Memory;
  /** After letting go of the agent too. */
  withoutBoth: Memory;
  auditRecords: number;
}

export interface RoundTripOptions {
  warmup: number;
  sequential: number;
  concurrent: number;
  batch: number;
  components: number;
  memoryCalls: number;
}

export const DEFAULT_ROUNDTRIP: RoundTripOptions = {
  warmup: 500,
  sequential: 10_000,
  concurrent: 10_000,
  batch: 100,
  components: 5_000,
  memoryCalls: 100_000,
};

export interface RoundTripResult {
  rows: LatencyRow[];
  components: Component[];
  memory: MemoryResult;
}

async function timeAsync(n: number, fn: (i: number) => Promise<unknown>): Promise<Latency> {
  for (let i = 0; i < PART_WARMUP; i++) await fn(-1 - i);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = nowMs();
    await fn(i);
    out.push(nowMs() - t0);
  }
  return latency(out);
}

function row(
  medium: Medium,
  mode: LatencyRow['mode'],
  samples: number[],
  wallMs: number,
): LatencyRow {
  return {
    medium,
    mode,
    latency: latency(samples),
    wallMs,
    callsPerSec: (samples.length / wallMs) * 1000,
  };
}

/**
 * What a run holds. Only helpers touch the agent and the simulator, through this object: a
 * suspended async frame keeps its temporaries, so a value once loaded in the caller itself would
 * stay reachable until it returns, and "after letting go" would measure nothing.
 */
interface Held {
  rig?: Rig;
  agent?: Agent;
}

async function hold(held: Held, base: string): Promise<string> {
  held.rig = await openRig(base);
  return held.rig.dir;
}

async function release(held: Held): Promise<void> {
  const rig = held.rig;
  held.rig = undefined;
  if (rig) await closeRig(rig);
}

async function timedSequential(held: Held, medium: Medium, n: number): Promise<LatencyRow> {
  const pace = held.rig!.pace;
  pace.counts = { inline: 0, pool: 0, stalls: 0, inlineStalls: 0 };
  const t0 = nowMs();
  const samples = await sequential(adventCall(held.rig!.peer), n);
  const timed = row(medium, 'sequential', samples, nowMs() - t0);
  return medium.name === 'disk' ? { ...timed, flushes: pace.counts } : timed;
}

async function timedConcurrent(
  held: Held,
  medium: Medium,
  n: number,
  batch: number,
): Promise<LatencyRow> {
  const t0 = nowMs();
  const samples = await concurrent(adventCall(held.rig!.peer), n, batch);
  return row(medium, 'concurrent', samples, nowMs() - t0);
}

/** The simulator's side of the connection the agent opened afresh, once a call succeeds on it. */
async function renewedPeer(rig: Rig): Promise<SimPeer> {
  const until = nowMs() + 30_000;
  for (;;) {
    try {
      const peer = rig.sim.peer();
      await adventCall(peer)();
      return peer;
    } catch (err) {
      if (nowMs() > until) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** Calls per stretch of a long drive, between which a connection the agent renewed is picked up. */
const STRETCH = 5_000;

/**
 * `calls` untimed calls, `batch` at a time. A connection keeps the ids of every call it carried
 * (app/wire/advent/calls.ts, bounded in bytes): after some 60 000 the agent answers that it is
 * starting afresh and reconnects, as it would with a real server. The drive then waits for the
 * new connection and carries on, repeating the stretch that was cut short.
 */
async function drive(held: Held, calls: number, batch: number): Promise<void> {
  const rig = held.rig!;
  for (let left = calls; left > 0;) {
    const n = Math.min(left, Math.max(batch, STRETCH - (STRETCH % batch)));
    try {
      await concurrent(adventCall(rig.peer), n, batch);
      left -= n;
    } catch (err) {
      if (!/starts afresh/.test(String(err))) throw err;
      rig.peer = await renewedPeer(rig);
    }
  }
}

/** Close both; keep only the (closed) agent; report how many audit records it holds. */
async function closeKeepingAgent(held: Held): Promise<number> {
  const rig = held.rig!;
  const records = rig.agent.audit.stats().records;
  await rig.agent.close();
  await rig.sim.stop();
  held.agent = rig.agent;
  held.rig = undefined;
  return records;
}

/** Sequential then concurrent latency with the audit log on `medium`. */
async function latencyRun(
  medium: Medium,
  opts: RoundTripOptions,
  log: (line: string) => void,
): Promise<LatencyRow[]> {
  const held: Held = {};
  await hold(held, medium.base);
  try {
    await drive(held, opts.warmup, 1);
    const seq = await timedSequential(held, medium, opts.sequential);
    log(`    sequential ${opts.sequential}: ${(seq.wallMs / 1000).toFixed(1)} s`);
    const conc = await timedConcurrent(held, medium, opts.concurrent, opts.batch);
    log(
      `    concurrent ${opts.concurrent} (${opts.batch} at a time): ${(conc.wallMs / 1000).toFixed(1)} s`,
    );
    return [seq, conc];
  } finally {
    await release(held);
  }
}

/**
 * RSS and heap before and after `memoryCalls` calls, then after closing and letting go of the
 * simulator and the agent (what they retained). When `rows` is given, the first calls are the
 * timed sequential and concurrent runs for this medium, so the long run doubles as them.
 */
async function memoryRun(
  medium: Medium,
  opts: RoundTripOptions,
  log: (line: string) => void,
  rows?: LatencyRow[],
): Promise<MemoryResult> {
  const held: Held = {};
  const dir = await hold(held, medium.base);
  try {
    await drive(held, opts.warmup, 1);
    await drive(held, opts.warmup * 2, opts.batch);
    const before = await memory();
    const t0 = nowMs();
    let left = opts.memoryCalls;
    let how = `${opts.memoryCalls} calls, ${opts.batch} at a time`;
    if (rows) {
      const seq = await timedSequential(held, medium, opts.sequential);
      log(`    sequential ${opts.sequential}: ${(seq.wallMs / 1000).toFixed(1)} s`);
      const conc = await timedConcurrent(held, medium, opts.concurrent, opts.batch);
      log(
        `    concurrent ${opts.concurrent} (${opts.batch} at a time): ${(conc.wallMs / 1000).toFixed(1)} s`,
      );
      rows.push(seq, conc);
      left = Math.max(0, left - opts.sequential - opts.concurrent);
      how = `the ${opts.sequential} sequential and ${opts.concurrent} concurrent calls above, then ${left} more ${opts.batch} at a time`;
    }
    log(`  memory: ${left} more calls (${opts.memoryCalls} in all), audit on ${medium.name}`);
    await drive(held, left, opts.batch);
    const wallMs = nowMs() - t0;
    const after = await memory();
    const auditRecords = await closeKeepingAgent(held);
    const withoutSim = await memory();
    held.agent = undefined;
    const withoutBoth = await memory();
    return {
      medium,
      calls: opts.memoryCalls,
      how,
      wallMs,
      before,
      after,
      withoutSim,
      withoutBoth,
      auditRecords,
    };
  } finally {
    await release(held);
    await rm(dir, { recursive: true, force: true });
  }
}

/** The gate alone (an Agent with no connection) and the audit append alone, on `medium`. */
async function componentsOn(medium: Medium, n: number): Promise<Component[]> {
  const out: Component[] = [];
  const bytes = await auditLineBytes(medium);
  const dir = await mkdtemp(path.join(medium.base, 'advent-bench-parts-'));
  try {
    const agent = await Agent.open({
      dataDir: path.join(dir, 'data'),
      defaultFilesRoot: path.join(dir, 'files'),
      secrets: new MemorySecretStore(),
      services: [benchWriteService],
      overrides: { policies: { [benchWriteService.name]: 'allow' }, callPace: BENCH_PACE },
    });
    const dispatch = (i: number) =>
      agent.dispatch({
        connection: { id: 'bench', name: 'Bench' },
        dialect: 'advent',
        callId: `d-${i}`,
        service: METHOD,
        params: PARAMS,
      });
    out.push({
      label: 'gate: agent.dispatch, no wire (audit included)',
      medium: medium.name,
      latency: await timeAsync(n, async (i) => {
        const r = await dispatch(i);
        if (!r.ok) throw new Error(`dispatch failed: ${r.message}`);
      }),
    });
    const write = (i: number) =>
      agent.dispatch({
        connection: { id: 'bench', name: 'Bench' },
        dialect: 'advent',
        callId: `w-${i}`,
        service: benchWriteService.name,
        params: { n: i },
      });
    out.push({
      label: 'gate (write-ahead): agent.dispatch of a no-op write service (intent + outcome)',
      medium: medium.name,
      latency: await timeAsync(n, async (i) => {
        const r = await write(i);
        if (!r.ok) throw new Error(`dispatch failed: ${r.message}`);
      }),
    });
    await agent.close();
    out.push(
      {
        label: `fsync: one audit line (${bytes} B) written + fdatasync (thread pool)`,
        medium: medium.name,
        latency: await fsyncAlone(medium, n, 'pool', bytes),
      },
      {
        label:
          'fsync inline: the same, fdatasync on the event loop (as the log flushes a quick disk)',
        medium: medium.name,
        latency: await fsyncAlone(medium, n, 'inline', bytes),
      },
      {
        label:
          'fsync in place: the same line written over room made ready (as the log writes it), fdatasync inline',
        medium: medium.name,
        latency: await fsyncAlone(medium, n, 'in place', bytes),
      },
      {
        label:
          'bare MCP SDK + fsync: the bare server below, its tool appending + fdatasyncing one line inline',
        medium: medium.name,
        latency: await bareMcpRoundTrip(n, { medium, bytes }),
      },
    );
    const wake = await wakeCost(medium, n, bytes);
    out.push(
      {
        label: 'CPU: one audit record built and hashed, warm (no I/O)',
        medium: medium.name,
        latency: wake.warm,
      },
      {
        label: 'CPU: the same, right after sleeping through an fsync',
        medium: medium.name,
        latency: wake.woken,
      },
    );
    // The audit append alone (build, hash, one line written + fsync'd), in a log of its own.
    const log = await AuditLog.open({ dir: path.join(dir, 'audit-only') });
    out.push({
      label: 'audit: AuditLog.append (group commit: one write + fsync per batch)',
      medium: medium.name,
      latency: await timeAsync(n, (i) =>
        log.append({
          ts: new Date().toISOString(),
          connection: 'Bench',
          dialect: 'advent',
          callId: `a-${i}`,
          service: METHOD,
          params: PARAMS,
          decision: 'auto',
          outcome: 'ok',
          durationMs: 1,
        }),
      ),
    });
    await log.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return out;
}

async function serviceAlone(n: number): Promise<Component> {
  const ctx = { clock: { now: () => Date.now() } } as unknown as Parameters<
    typeof getCurrentTimeService.run
  >[1];
  const params = PARAMS as { format: 'simple' };
  return {
    label: 'service: get_current_time preview + run (no gate)',
    latency: await timeAsync(n, async () => {
      await getCurrentTimeService.preview!(params, ctx);
      await getCurrentTimeService.run(params, ctx);
    }),
  };
}

export async function runRoundTripBench(
  opts: RoundTripOptions = DEFAULT_ROUNDTRIP,
  log: (line: string) => void = () => {},
): Promise<RoundTripResult> {
  const available = media();
  const disk = available[0]!;
  const tmpfs = available.find((m) => m.name === 'tmpfs');
  const rows: LatencyRow[] = [];

  log(`  disk: audit in ${disk.base} (${disk.fsType ?? 'unknown fs'})`);
  rows.push(...(await latencyRun(disk, opts, log)));

  // The 100 000-call memory run is the long one; on tmpfs it also gives the tmpfs latency rows
  // (every append is fsync'd, so on disk it would take minutes and measure the disk).
  let mem: MemoryResult;
  if (tmpfs) {
    log(`  tmpfs: audit in ${tmpfs.base} (${tmpfs.fsType ?? 'unknown fs'})`);
    mem = await memoryRun(tmpfs, opts, log, rows);
  } else {
    mem = await memoryRun(disk, opts, log);
  }

  log('  components');
  const components: Component[] = [
    await serviceAlone(opts.components),
    {
      label: 'bare MCP SDK: Client.callTool → McpServer tool (in-memory transport), no gate',
      latency: await bareMcpRoundTrip(opts.components),
    },
  ];
  for (const medium of available) components.push(...(await componentsOn(medium, opts.components)));
  // The wait stands for the log's own flush: written in place, as it writes its records.
  const ownFlush = components.find(
    (c) => c.medium === 'disk' && c.label.startsWith('fsync in place:'),
  );
  if (ownFlush) {
    const waitMs = ownFlush.latency.p50;
    const rig = await openRig(disk.base, { auditIo: busyWaitFlushIo(waitMs) });
    try {
      const call = adventCall(rig.peer);
      await sequential(call, PART_WARMUP);
      components.push({
        label: `round trip, each flush a busy-wait of the in-place fsync's p50 (${waitMs.toFixed(2)} ms), no I/O`,
        medium: disk.name,
        latency: latency(await sequential(call, opts.components)),
      });
    } finally {
      await closeRig(rig);
    }
  }
  return { rows, components, memory: mem };
}
