/**
 * The call round trip per dialect: one Agent connected at once to an Advent simulator (TCP
 * frames, the baseline), a XiaoZhi device server (MCP in `{"type":"mcp"}` envelopes over a
 * WebSocket), a XiaoZhi MCP endpoint (bare JSON-RPC over a WebSocket) and two robot servers
 * (`mcp/tool/execute` over a WebSocket): one sending each execute once, one sending it twice as
 * the reference server does. Each simulator sends get_current_time and waits for the result,
 * which comes through the one gate and audit log.
 *
 * The dialects take turns in blocks (sequential) or batches (concurrent), in an order rotated every
 * round, so a busy moment of the machine falls on all of them alike and every ratio to Advent is
 * taken within the same run, rig and audit log.
 */
import { rm } from 'node:fs/promises';
import { type AddressInfo, type Socket, connect, createServer } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import type { Agent } from '../../app/agent.js';
import { systemClock } from '../../app/clock.js';
import type { Profile } from '../../app/contract/commands.js';
import { AdventSim } from '../../sim/advent/server.js';
import { EndpointSim } from '../../sim/endpoint/server.js';
import { RobotSim } from '../../sim/robot/server.js';
import { XiaozhiSim } from '../../sim/xiaozhi/server.js';
import { RecentExecutes } from '../../app/wire/robot/dedupe.js';
import { splitUrlToken } from '../../app/wire/kit/url.js';
import { until } from '../helpers/wait.js';
import { adventCall } from './roundtrip.js';
import {
  type Call,
  METHOD,
  type Medium,
  PARAMS,
  concurrent,
  openAgent,
  sequential,
  whenReady,
} from './rig.js';
import { type Latency, latency, nowMs } from './stats.js';

export type DialectId = 'advent' | 'xiaozhi' | 'endpoint' | 'robot' | 'robot-x2';

export const DIALECTS: ReadonlyArray<{ id: DialectId; label: string; wire: string }> = [
  { id: 'advent', label: 'Advent (baseline)', wire: 'TCP, ##START…##END frames, MCP call/result' },
  {
    id: 'xiaozhi',
    label: 'XiaoZhi device',
    wire: 'WebSocket, JSON-RPC inside {"type":"mcp"}',
  },
  { id: 'endpoint', label: 'XiaoZhi MCP endpoint', wire: 'WebSocket, bare JSON-RPC' },
  { id: 'robot', label: 'Robot JSON-RPC', wire: 'WebSocket, mcp/tool/execute, sent once' },
  {
    id: 'robot-x2',
    label: 'Robot JSON-RPC, each execute sent twice',
    wire: 'as above, plus the id-less copy the reference server sends (recorded, not run)',
  },
];

export interface DialectOptions {
  /** Sequential calls per dialect before timing, then two concurrent batches. */
  warmup: number;
  /** Sequential calls per dialect, timed. */
  sequential: number;
  /** Calls per dialect sent `batch` at a time, timed; 0 skips the concurrent rows. */
  concurrent: number;
  batch: number;
  /** Sequential calls of one dialect before the next takes its turn. */
  block: number;
}

export const DEFAULT_DIALECTS: DialectOptions = {
  warmup: 300,
  sequential: 5_000,
  concurrent: 5_000,
  batch: 100,
  block: 250,
};

export interface DialectRow {
  dialect: DialectId;
  medium: Medium;
  mode: 'sequential' | 'concurrent';
  latency: Latency;
  /** The time spent in this dialect's blocks or batches. */
  wallMs: number;
  callsPerSec: number;
  /** This row's p50 ÷ Advent's p50, same medium and mode, same run. */
  ratio: number;
}

export interface DialectResult {
  rows: DialectRow[];
  options: DialectOptions;
  /** Audit records written per connection on each medium (robot ×2: the id-less copies too). */
  audit: Array<{ medium: Medium['name']; records: number }>;
  /** Protocol rules the agent broke, as each simulator saw them (expected: none). */
  violations: string[];
  /** What the wire's parts cost alone on this machine, for reading the rows. */
  reference?: WireReference;
}

export interface WireReference {
  /** Bytes of the XiaoZhi tools/call request and of its reply, as sent (envelope included). */
  requestBytes: number;
  replyBytes: number;
  /** JSON.stringify + JSON.parse of that request and that reply (what one call costs in JSON), µs. */
  jsonUs: number;
  /** A message of the request's size echoed over loopback: raw TCP, and a WebSocket (ws). */
  tcpEcho: Latency;
  wsEcho: Latency;
  /**
   * The robot session's duplicate check (`RecentExecutes.arrive`, app/wire/robot/dedupe.ts) alone,
   * µs per execute, with `entries` executes of the same tool already in its 5 s window.
   */
  dedupe: Array<{ entries: number; us: number }>;
}

interface DialectRig {
  dir: string;
  agent: Agent;
  advent: AdventSim;
  xiaozhi: XiaozhiSim;
  endpoint: EndpointSim;
  robot: RobotSim;
  robotX2: RobotSim;
  calls: Record<DialectId, Call>;
}

async function stopSims(sims: Array<{ stop(): Promise<void> } | undefined>): Promise<void> {
  await Promise.all(sims.map((s) => s?.stop()));
}

/** One Agent in a temp dir under `base`, connected to a simulator of every dialect. */
async function openRig(base: string): Promise<DialectRig> {
  const { dir, agent } = await openAgent(base, { wsTiming: { closeWaitMs: 200 } });
  let sims: Array<{ stop(): Promise<void> }> = [];
  try {
    // No message logs where a simulator has the option: they would be the simulator's memory.
    const [advent, xiaozhi, endpoint, robot, robotX2] = await Promise.all([
      AdventSim.start({ demo: false, record: false, disconnectCloseMs: 10 }),
      XiaozhiSim.start({ demo: false, record: false }),
      EndpointSim.start({ record: false }),
      RobotSim.start({ demo: false, duplicateExecutes: false }),
      RobotSim.start({ demo: false }),
    ]);
    sims = [advent, xiaozhi, endpoint, robot, robotX2];
    const profiles: Profile[] = [
      { id: 'advent', kind: 'advent', name: 'Advent', host: '127.0.0.1', port: advent.port },
      { id: 'xiaozhi', kind: 'xiaozhi', name: 'XiaoZhi', url: xiaozhi.url },
      { id: 'endpoint', kind: 'endpoint', name: 'Endpoint', url: splitUrlToken(endpoint.url).url },
      { id: 'robot', kind: 'robot', name: 'Robot', url: robot.url },
      { id: 'robot-x2', kind: 'robot', name: 'Robot x2', url: robotX2.url },
    ];
    const secrets: Record<string, string> = { advent: 'bench-token', endpoint: endpoint.token };
    const ready = profiles.map((p) => whenReady(agent, p.id));
    for (const p of profiles) agent.connect(p, () => secrets[p.id]);
    await Promise.all(ready);
    // Ready is not yet listed: wait until every server knows the agent's tools.
    await Promise.all([
      until(() => advent.registrations().length > 0, 'the Advent register', 10_000),
      xiaozhi.waitForTools(),
      endpoint.waitForTools((t) => t.some((x) => x.name === METHOD)),
      robot.waitForRegistration(),
      robotX2.waitForRegistration(),
    ]);
    const peer = advent.peer();
    const mcp = (who: string, r: { isError: boolean; text: string }) => {
      if (r.isError) throw new Error(`${METHOD} from ${who} failed: ${r.text}`);
    };
    const robotCall = (sim: RobotSim, who: string) => async () => {
      const outcome = await sim.execute(METHOD, PARAMS);
      if (outcome.error || outcome.result === undefined)
        throw new Error(`${METHOD} from ${who} failed: ${JSON.stringify(outcome)}`);
    };
    const calls: Record<DialectId, Call> = {
      advent: adventCall(peer),
      xiaozhi: async () => mcp('the XiaoZhi server', await xiaozhi.callTool(METHOD, PARAMS)),
      endpoint: async () => mcp('the endpoint', await endpoint.callTool(METHOD, PARAMS)),
      robot: robotCall(robot, 'the robot server'),
      'robot-x2': robotCall(robotX2, 'the robot server (executes twice)'),
    };
    return { dir, agent, advent, xiaozhi, endpoint, robot, robotX2, calls };
  } catch (err) {
    await agent.close();
    await stopSims(sims);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

async function closeRig(rig: DialectRig): Promise<void> {
  await rig.agent.close();
  await stopSims([rig.advent, rig.xiaozhi, rig.endpoint, rig.robot, rig.robotX2]);
  await rm(rig.dir, { recursive: true, force: true });
}

/** The dialects in round `r`'s order: rotated by one every round. */
function turnOrder(r: number): DialectId[] {
  const ids = DIALECTS.map((d) => d.id);
  const k = r % ids.length;
  return [...ids.slice(k), ...ids.slice(0, k)];
}

interface Tally {
  samples: number[];
  wallMs: number;
}

/**
 * Every dialect `total` calls, `per` at a time per turn: sequential blocks, or concurrent
 * batches of `per` (each call timed on its own). Turns rotate between dialects.
 */
async function takeTurns(
  rig: DialectRig,
  mode: DialectRow['mode'],
  total: number,
  per: number,
): Promise<Record<DialectId, Tally>> {
  const out = {} as Record<DialectId, Tally>;
  for (const d of DIALECTS) out[d.id] = { samples: [], wallMs: 0 };
  for (let r = 0, done = 0; done < total; r++, done += per) {
    const k = Math.min(per, total - done);
    for (const id of turnOrder(r)) {
      const t0 = nowMs();
      const samples =
        mode === 'sequential'
          ? await sequential(rig.calls[id], k)
          : await concurrent(rig.calls[id], k, k);
      out[id].wallMs += nowMs() - t0;
      out[id].samples.push(...samples);
    }
  }
  return out;
}

function rows(medium: Medium, mode: DialectRow['mode'], tally: Record<DialectId, Tally>) {
  const base = latency(tally.advent.samples).p50;
  return DIALECTS.map(({ id }): DialectRow => {
    const l = latency(tally[id].samples);
    return {
      dialect: id,
      medium,
      mode,
      latency: l,
      wallMs: tally[id].wallMs,
      callsPerSec: (l.n / tally[id].wallMs) * 1000,
      ratio: l.p50 / base,
    };
  });
}

async function runOn(
  medium: Medium,
  opts: DialectOptions,
  log: (line: string) => void,
  result: DialectResult,
  sample: { raw?: unknown },
): Promise<void> {
  log(`  ${medium.name}: audit in ${medium.base} (${medium.fsType ?? 'unknown fs'})`);
  const rig = await openRig(medium.base);
  try {
    for (const d of DIALECTS) {
      await sequential(rig.calls[d.id], opts.warmup);
      await concurrent(rig.calls[d.id], 2 * opts.batch, opts.batch);
    }
    const t0 = nowMs();
    const seq = await takeTurns(rig, 'sequential', opts.sequential, opts.block);
    result.rows.push(...rows(medium, 'sequential', seq));
    log(
      `    sequential ${opts.sequential} per dialect, ${opts.block} at a turn: ${((nowMs() - t0) / 1000).toFixed(1)} s`,
    );
    if (opts.concurrent > 0) {
      const t1 = nowMs();
      const conc = await takeTurns(rig, 'concurrent', opts.concurrent, opts.batch);
      result.rows.push(...rows(medium, 'concurrent', conc));
      log(
        `    concurrent ${opts.concurrent} per dialect, ${opts.batch} at a time: ${((nowMs() - t1) / 1000).toFixed(1)} s`,
      );
    }
    result.audit.push({ medium: medium.name, records: rig.agent.audit.stats().records });
    // One real reply, after the timed runs: it sizes the wire reference.
    const probe = await rig.xiaozhi.callTool(METHOD, PARAMS);
    if (probe.isError) throw new Error(`${METHOD} from the XiaoZhi server failed: ${probe.text}`);
    sample.raw = probe.raw;
    const seen: Array<[string, string[]]> = [
      ['XiaoZhi', rig.xiaozhi.violations],
      ['endpoint', rig.endpoint.violations],
      ['robot', rig.robot.violations],
      ['robot x2', rig.robotX2.violations],
    ];
    for (const [who, list] of seen)
      for (const v of list) result.violations.push(`${medium.name}, ${who}: ${v}`);
  } finally {
    await closeRig(rig);
  }
}

function median(values: number[]): number {
  return latency(values).p50;
}

/** JSON.stringify + JSON.parse of `messages`, µs per pass (median of 5 runs after a warm-up). */
function jsonCost(messages: unknown[], n: number): number {
  let sink = 0;
  const pass = () => {
    for (const m of messages) sink += (JSON.parse(JSON.stringify(m)) as object) ? 1 : 0;
  };
  for (let i = 0; i < n; i++) pass();
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = nowMs();
    for (let i = 0; i < n; i++) pass();
    runs.push(((nowMs() - t0) * 1000) / n);
  }
  if (sink === 0) throw new Error('unreachable');
  return median(runs);
}

/** `n` sequential round trips through `send`, after 1 000 untimed. */
async function echoLoop(send: (done: () => void) => void, n: number): Promise<Latency> {
  const once = () => new Promise<void>((resolve) => send(resolve));
  for (let i = 0; i < 1_000; i++) await once();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = nowMs();
    await once();
    out.push(nowMs() - t0);
  }
  return latency(out);
}

/** Raw TCP on loopback: the server writes back what it reads; a round trip ends at the last byte. */
async function tcpEcho(message: string, n: number): Promise<Latency> {
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    sockets.push(s);
    s.setNoDelay(true);
    s.on('data', (d) => s.write(d));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  client.setNoDelay(true);
  await new Promise<void>((resolve) => client.once('connect', resolve));
  const bytes = Buffer.byteLength(message);
  let want = 0;
  let done: () => void = () => undefined;
  client.on('data', (d) => {
    want -= d.length;
    if (want <= 0) done();
  });
  try {
    return await echoLoop((resolve) => {
      want = bytes;
      done = resolve;
      client.write(message);
    }, n);
  } finally {
    client.destroy();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** A WebSocket on loopback (ws both ends, no compression): the server sends back each message. */
async function wsEcho(message: string, n: number): Promise<Latency> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  wss.on('connection', (s) => s.on('message', (d, binary) => s.send(d, { binary })));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`, {
    perMessageDeflate: false,
  });
  await new Promise<void>((resolve, reject) => {
    client.once('open', resolve);
    client.once('error', reject);
  });
  let done: () => void = () => undefined;
  client.on('message', () => done());
  try {
    return await echoLoop((resolve) => {
      done = resolve;
      client.send(message);
    }, n);
  } finally {
    client.terminate();
    for (const s of wss.clients) s.terminate();
    await new Promise((resolve) => wss.close(resolve));
  }
}

const DEDUPE_WINDOWS = [0, 100, 1_000, 2_000];

/** µs per `RecentExecutes.arrive` of get_current_time with `entries` executes already in the window. */
function dedupeCost(entries: number, n = 200): number {
  const recent = new RecentExecutes(5_000, systemClock);
  let i = 0;
  const arrive = () => recent.arrive(METHOD, PARAMS, `bench-${i++}`, () => `idless-${i}`);
  while (i < entries) arrive();
  const t0 = nowMs();
  for (let k = 0; k < n; k++) arrive();
  return ((nowMs() - t0) * 1000) / n;
}

/** The wire's parts alone, sized after one real XiaoZhi call (`raw`: its reply payload). */
export async function wireReference(raw: unknown, n: number): Promise<WireReference> {
  const request = {
    type: 'mcp',
    payload: {
      jsonrpc: '2.0',
      id: 12345,
      method: 'tools/call',
      params: { name: METHOD, arguments: PARAMS },
    },
  };
  const reply = { type: 'mcp', payload: raw };
  const requestText = JSON.stringify(request);
  dedupeCost(DEDUPE_WINDOWS.at(-1)!); // warm-up
  return {
    requestBytes: Buffer.byteLength(requestText),
    replyBytes: Buffer.byteLength(JSON.stringify(reply)),
    jsonUs: jsonCost([request, reply], Math.max(1000, n * 10)),
    tcpEcho: await tcpEcho(requestText, n),
    wsEcho: await wsEcho(requestText, n),
    dedupe: DEDUPE_WINDOWS.map((entries) => ({ entries, us: dedupeCost(entries) })),
  };
}

export async function runDialectBench(
  media: readonly Medium[],
  opts: DialectOptions = DEFAULT_DIALECTS,
  log: (line: string) => void = () => {},
): Promise<DialectResult> {
  const result: DialectResult = { rows: [], options: opts, audit: [], violations: [] };
  const sample: { raw?: unknown } = {};
  for (const medium of media) await runOn(medium, opts, log, result, sample);
  // Alone, once every rig is closed: nothing else on the event loop.
  log('  wire reference: JSON, and a TCP and a WebSocket echo alone');
  result.reference = await wireReference(sample.raw, opts.sequential);
  return result;
}
