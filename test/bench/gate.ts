/**
 * The references the gate is measured against (issue 9 §7): one fsync on each medium (what the
 * audit's durability costs at least, per record), and a bare `@modelcontextprotocol/sdk` tool
 * server answering a call (what a round trip costs with no gate at all). Measured in the same run
 * as the gate, so the comparison holds whatever the machine's load.
 */
import { close, fdatasync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type AuditIo, ROOM_BYTES, nodeIo } from '../../app/audit/append.js';
import { GENESIS_HASH, canonicalRecord, recordMac } from '../../app/audit/chain.js';
import { AuditLog } from '../../app/audit/log.js';
import { canonicalJson, redactParams, sha256Hex } from '../../app/audit/redact.js';
import type { Service } from '../../app/services/service.js';
import { METHOD, type Medium, PARAMS } from './rig.js';
import { type Latency, PART_WARMUP, latency, nowMs } from './stats.js';

const fdatasyncAsync = promisify(fdatasync);
const closeAsync = promisify(close);

async function timed(n: number, fn: (i: number) => Promise<unknown>): Promise<Latency> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = nowMs();
    await fn(i);
    out.push(nowMs() - t0);
  }
  return latency(out);
}

/**
 * The bytes of the audit line the round trip's call is recorded in (§2: get_current_time from
 * "Bench", auto-allowed, answered), as the log writes it, key and all: the size of the write each
 * call's fsync makes durable, measured rather than assumed.
 */
export async function auditLineBytes(medium: Medium): Promise<number> {
  const dir = await mkdtemp(path.join(medium.base, 'advent-bench-line-'));
  try {
    const log = await AuditLog.open({ dir, key: AUDIT_KEY });
    await log.append({
      ts: new Date().toISOString(),
      connection: 'Bench',
      connectionId: 'bench',
      dialect: 'advent',
      callId: 'call_001',
      service: METHOD,
      params: PARAMS,
      decision: 'auto',
      outcome: 'ok',
      runMs: 0,
      durationMs: 0,
    });
    await log.close();
    const month = (await readdir(dir)).find((name) => name.endsWith('.jsonl'));
    return (await stat(path.join(dir, month as string))).size;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A line of `bytes` bytes, newline included. */
function lineOf(bytes: number): Buffer {
  return Buffer.from(`${'x'.repeat(Math.max(0, bytes - 1))}\n`);
}

/**
 * One audit line (`bytes` long, auditLineBytes) written and fdatasync'd. `pool` and `inline`
 * append it, the plain durable write and issue 9 §7's "one fsync": `pool` flushed in libuv's
 * thread pool (how the log flushes a disk until its flushes have proved quick), `inline` on the
 * event loop (how it flushes a quick disk, app/audit/flush-pace.ts, and a RAM file system
 * always). `in place` writes it over room made ready past the end, as the log writes its records
 * (append.ts ROOM_BYTES), and flushes inline: no size changes, so fdatasync has only the data.
 */
export async function fsyncAlone(
  medium: Medium,
  n: number,
  how: 'pool' | 'inline' | 'in place',
  bytes: number,
): Promise<Latency> {
  const dir = await mkdtemp(path.join(medium.base, 'advent-bench-fsync-'));
  const inPlace = how === 'in place';
  const fd = openSync(path.join(dir, 'f.jsonl'), inPlace ? 'w+' : 'a+', 0o600);
  const line = lineOf(bytes);
  if (inPlace) {
    writeSync(fd, Buffer.alloc(ROOM_BYTES), 0, ROOM_BYTES, 0);
    fdatasyncSync(fd);
  }
  let at = 0;
  const flush = how === 'pool' ? () => fdatasyncAsync(fd) : async () => fdatasyncSync(fd);
  const once = async () => {
    if (inPlace) {
      if (at + line.length > ROOM_BYTES) at = 0;
      writeSync(fd, line, 0, line.length, at);
      at += line.length;
    } else writeSync(fd, line);
    await flush();
  };
  try {
    for (let i = 0; i < PART_WARMUP; i++) await once();
    return await timed(n, once);
  } finally {
    await closeAsync(fd);
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The same CPU work (one audit record built, hashed and MAC'd as the log does, no I/O) timed warm,
 * in a loop, and right after the process slept through a disk fsync. A call whose record goes to
 * disk runs its reply, its wire and the next call's decoding after such a sleep; the ratio shows
 * what waking costs that code on this machine.
 */
export async function wakeCost(
  medium: Medium,
  n: number,
  bytes: number,
): Promise<{ warm: Latency; woken: Latency }> {
  const dir = await mkdtemp(path.join(medium.base, 'advent-bench-wake-'));
  const fd = openSync(path.join(dir, 'f.jsonl'), 'a+', 0o600);
  const line = lineOf(bytes);
  let seq = 0;
  const work = (): Buffer => {
    const params = { format: 'simple' };
    const record: Record<string, unknown> = {
      seq: ++seq,
      ts: new Date().toISOString(),
      connection: 'Bench',
      dialect: 'advent',
      callId: `w-${seq}`,
      service: 'get_current_time',
      params: redactParams(params),
      paramsSha256: sha256Hex(canonicalJson(params)),
      decision: 'auto',
      outcome: 'ok',
      durationMs: 0.3,
      prevHash: GENESIS_HASH,
    };
    record.hash = sha256Hex(canonicalRecord(record as never));
    record.mac = recordMac(AUDIT_KEY, record.hash as string);
    return Buffer.from(`${JSON.stringify(record)}\n`);
  };
  try {
    for (let i = 0; i < PART_WARMUP; i++) work();
    const warm: number[] = [];
    const woken: number[] = [];
    for (let i = 0; i < n; i++) {
      let t0 = nowMs();
      work();
      warm.push(nowMs() - t0);
      writeSync(fd, line);
      await fdatasyncAsync(fd);
      t0 = nowMs();
      work();
      woken.push(nowMs() - t0);
    }
    return { warm: latency(warm), woken: latency(woken) };
  } finally {
    await closeAsync(fd);
    await rm(dir, { recursive: true, force: true });
  }
}

/** The key of the bench's own logs (the agent's is its own, of the same length). */
const AUDIT_KEY = 'k'.repeat(64);

/**
 * The log's files, with each flush of a month file replaced by a busy-wait of `ms` (no fsync, so
 * nothing is durable: for the bench only). The round trip through it keeps every step of the real
 * one, the same time spent where the flush was, and no I/O: set beside the real round trip, it shows
 * what the fsync costs the code around it beyond its own time.
 */
export function busyWaitFlushIo(ms: number): AuditIo {
  return {
    ...nodeIo,
    openAppend: async (path) => {
      const inner = await nodeIo.openAppend(path);
      return {
        stat: () => inner.stat(),
        read: (buffer, offset, length, position) => inner.read(buffer, offset, length, position),
        write: (buffer, offset, length, position) => inner.write(buffer, offset, length, position),
        truncate: (len) => inner.truncate(len),
        close: () => inner.close(),
        sync: () => {
          const until = nowMs() + ms;
          while (nowMs() < until);
          return Promise.resolve();
        },
      };
    },
  };
}

/**
 * A bare MCP SDK server with one tool and its client, in-memory transport: callTool round trip.
 * With `durable` (a medium), the tool first appends one audit line there and fdatasyncs it on the
 * event loop, as the log does: the bare round trip and one fsync measured as one, which shows
 * whether the two add up on this machine or cost more together than apart.
 */
export async function bareMcpRoundTrip(
  n: number,
  durable?: { medium: Medium; bytes: number },
): Promise<Latency> {
  const dir = durable
    ? await mkdtemp(path.join(durable.medium.base, 'advent-bench-bare-'))
    : undefined;
  const fd = dir ? openSync(path.join(dir, 'f.jsonl'), 'a+', 0o600) : undefined;
  const line = lineOf(durable?.bytes ?? 0);
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  server.registerTool('get_current_time', { description: 'the time' }, async () => {
    if (fd !== undefined) {
      writeSync(fd, line);
      fdatasyncSync(fd);
    }
    return { content: [{ type: 'text', text: new Date().toISOString() }] };
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  try {
    const call = () => client.callTool({ name: 'get_current_time', arguments: {} });
    for (let i = 0; i < PART_WARMUP; i++) await call();
    return await timed(n, call);
  } finally {
    await client.close();
    await server.close();
    if (fd !== undefined) await closeAsync(fd);
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A service that can change something (risk `write`) and does nothing: through the gate it costs
 * exactly the write-ahead path (intent durable before it runs, outcome before the reply).
 */
export const benchWriteService: Service = {
  name: 'bench_write',
  title: 'Bench write',
  description: 'does nothing, as a write would be gated',
  parameters: { type: 'object', properties: { n: { type: 'integer' } } },
  risk: 'write',
  timeoutMs: 5000,
  run: async () => 'done',
};
