/**
 * A hostile Advent server against the real agent (a child `run --no-chat`), each attack measured
 * from outside (issue 10 item 2). Before the bounds, 600 MB of TEXT on made-up task ids took the
 * agent to 1.3 GB, and 40 calls with 3 MB method names cost +466 MB. (A server that stops reading:
 * wire-advent-backpressure.test.ts.)
 *
 * The flood is scaled down to 192 MiB: what holds is the bound (a few replies of at most
 * MAX_REPLY_CHARS each, kit/bounds.ts), so the memory the agent keeps does not depend on how much
 * is sent; the ceiling is well under what the volume sent would cost if it were kept.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FrameType } from '../../app/wire/advent/frame.js';
import {
  type AgentChild,
  HostileAdvent,
  MiB,
  auditBytes,
  requireBuild,
  sleep,
  spawnAgent,
  waitFor,
} from './wire-peers.js';

/** What the flood sends, and the most the agent's memory may grow meanwhile. */
const FLOOD_BYTES = 192 * MiB;
const FLOOD_RSS_CEILING = 128 * MiB;
/** 40 calls with 3 MB method names (120 MB), and what the agent may grow answering them. */
const NAME_CALLS = 40;
const NAME_BYTES = 3 * MiB;
// Decoding 3 MB frames leaves garbage the child collects when it likes: the ceiling allows for it,
// and is still a third of what the same calls cost before names were cut.
const NAMES_RSS_CEILING = 160 * MiB;

let server: HostileAdvent | undefined;
let agent: AgentChild | undefined;

beforeAll(() => requireBuild());

afterEach(async () => {
  await agent?.stop();
  await server?.close();
  agent = undefined;
  server = undefined;
});

/** The agent connected, registered and settled: its memory before the attack. */
async function connected(): Promise<{ s: HostileAdvent; a: AgentChild; baseline: number }> {
  server = await HostileAdvent.start();
  agent = await spawnAgent(server.port);
  await server.registered(1);
  await sleep(500);
  return { s: server, a: agent, baseline: agent.rss() };
}

/** Everything sent before this has been read: the answer to a call sent after it came back. */
async function synced(s: HostileAdvent, id: string, timeoutMs = 20_000): Promise<void> {
  await s.send(
    s.conns[0]!.socket,
    FrameType.MCP,
    'mcp00001',
    0,
    HostileAdvent.call(id, 'get_current_time'),
  );
  await waitFor(() => s.results(1).some((r) => r.call_id === id), `the answer to ${id}`, timeoutMs);
}

describe('hostile Advent server: memory stays bounded', () => {
  it(`a ${FLOOD_BYTES / MiB} MiB flood of TEXT on made-up task ids leaves the agent under +${FLOOD_RSS_CEILING / MiB} MiB`, async () => {
    const { s, a, baseline } = await connected();
    const socket = s.conns[0]!.socket;
    const piece = Buffer.alloc(64 * 1024, 'a');
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, a.rss())), 200);
    try {
      for (let i = 0; i < FLOOD_BYTES / piece.length; i++) {
        // A new task every second frame; none is ever ended.
        const task = (0x10000000 + Math.floor(i / 2)).toString(16);
        await s.send(socket, FrameType.TEXT, task, i % 10_000, piece);
      }
      await synced(s, 'after-flood');
    } finally {
      clearInterval(sampler);
    }
    const after = a.rss();
    peak = Math.max(peak, after);
    expect(a.exitCode).toBeNull();
    expect(peak - baseline, `peak RSS ${peak} vs baseline ${baseline}`).toBeLessThan(
      FLOOD_RSS_CEILING,
    );
  });

  it(`${NAME_CALLS} calls with ${NAME_BYTES / MiB} MB method names are answered, with small answers and a small audit log`, async () => {
    const { s, a, baseline } = await connected();
    const socket = s.conns[0]!.socket;
    const name = 'x'.repeat(NAME_BYTES);
    for (let i = 0; i < NAME_CALLS; i++)
      await s.send(socket, FrameType.MCP, 'mcp00001', 0, HostileAdvent.call(`long-${i}`, name));
    await waitFor(() => s.results(1).length >= NAME_CALLS, 'every call answered', 20_000);
    const results = s.results(1);
    expect(results.every((r) => r.result.success === false)).toBe(true);
    expect(Math.max(...results.map((r) => JSON.stringify(r).length))).toBeLessThan(4096);
    expect(a.rss() - baseline).toBeLessThan(NAMES_RSS_CEILING);
    expect(await auditBytes(`${a.dir}/data/audit`)).toBeLessThan(1 * MiB);
  });
});
