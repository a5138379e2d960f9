/**
 * The references the gate is measured against (issue 9 §7): one fsync on each medium (what the
 * audit's durability costs at least, per record), and a bare `@modelcontextprotocol/sdk` tool
 * server answering a call (what a round trip costs with no gate at all). Measured in the same run
 * as the gate, so the comparison holds whatever the machine's load.
 */
import { close, fdatasync, openSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Service } from '../../app/services/service.js';
import type { Medium } from './rig.js';
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

/** One audit-sized line (200 B) appended and fdatasync'd, as the log does per batch. */
export async function fsyncAlone(medium: Medium, n: number): Promise<Latency> {
  const dir = await mkdtemp(path.join(medium.base, 'advent-bench-fsync-'));
  const fd = openSync(path.join(dir, 'f.jsonl'), 'a+', 0o600);
  const line = Buffer.from(`${'x'.repeat(199)}\n`);
  try {
    for (let i = 0; i < PART_WARMUP; i++) {
      writeSync(fd, line);
      await fdatasyncAsync(fd);
    }
    return await timed(n, async () => {
      writeSync(fd, line);
      await fdatasyncAsync(fd);
    });
  } finally {
    await closeAsync(fd);
    await rm(dir, { recursive: true, force: true });
  }
}

/** A bare MCP SDK server with one tool and its client, in-memory transport: callTool round trip. */
export async function bareMcpRoundTrip(n: number): Promise<Latency> {
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  server.registerTool('get_current_time', { description: 'the time' }, async () => ({
    content: [{ type: 'text', text: new Date().toISOString() }],
  }));
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
