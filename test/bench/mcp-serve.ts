/**
 * The agent as an MCP server for other apps (issue 12): `get_current_time` from the SDK's Client
 * over stdio (`advent-agent mcp`, the built command, its own agent in a child process) and over
 * Streamable HTTP (the agent's endpoint), each against bare SDK servers with the same tool on the
 * same transport (test/fixtures/mcp-bare-time-server.mjs), interleaved in blocks in one run.
 *
 * The issue's target is agent p50 ≤ bare + gate + one fsync + 0.2 ms, each term measured:
 * - bare + one fsync: the bare server whose tool makes the one flush the audit log makes for this
 *   call, as the log makes it (a line written over room made ready, fdatasync inline). Measured as
 *   one round trip, not as two sums: on a machine whose idle CPU halts (a VM's haltpoll), the code
 *   after a flush runs slower than warm, and a bare server that flushes pays that too;
 * - gate: get_current_time dispatched in process by an agent whose audit log is in RAM (tmpfs),
 *   the gate without the disk.
 * The stricter sum of parts measured apart (bare + the gate on disk, its fsync included, + 0.2 ms)
 * is reported beside it.
 *
 * Like for like: the bare HTTP servers answer in the same response mode as the agent's endpoint
 * (one JSON body per POST, `enableJsonResponse`), and every call on every path starts after the
 * same idle pause (see mcp.ts: back to back, a process still awake from its previous answer is
 * faster to reach than one a call's fsync left idle).
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpServe } from '../../app/mcp-serve/mcp-serve.js';
import { MemorySecretStore } from '../../app/settings/secrets.js';
import { auditLineBytes } from './gate.js';
import { pause } from './mcp.js';
import { media, openAgent } from './rig.js';
import { type Latency, latency, nowMs } from './stats.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BARE = path.resolve(here, '../fixtures/mcp-bare-time-server.mjs');
const BIN = path.resolve(here, '../../bin/advent-agent.js');
const BUILT = path.resolve(here, '../../dist/main/headless/cli.js');

export interface McpServeBenchOptions {
  warmup: number;
  calls: number;
  block: number;
  /** Idle time before each call, untimed, the same on every path. */
  pauseMs: number;
}

/**
 * 2000 calls of warm-up per path: a server's first thousand or so calls run code the JIT has not
 * optimised yet, and over stdio the bare server and the agent reach their steady pace at
 * different times (measured: the bare server's p50 is 0.17 ms over its first 2000 calls and
 * 0.05 ms after; the agent's 0.50 and 0.38). An app such as Claude Desktop keeps its server
 * running, so the steady pace is the one that counts, and each path gets the same warm-up.
 */
export const DEFAULT_MCP_SERVE: McpServeBenchOptions = {
  warmup: 2000,
  calls: 2000,
  block: 50,
  pauseMs: 1,
};

export interface McpServeBenchResult {
  /** `durable`: the bare server whose tool makes the audit log's one flush (see above). */
  stdio: { bare: Latency; durable: Latency; agent: Latency };
  http: { bare: Latency; durable: Latency; agent: Latency };
  /** The gate in process, audit log on disk (its fsync included). */
  gate: Latency;
  /** The same with the audit log in RAM (tmpfs): the gate without the disk; absent without one. */
  gateRam?: Latency;
  /** Untimed calls each path made first. */
  warmup: number;
}

const CALL = { name: 'get_current_time', arguments: { format: 'simple' } };

async function timed(
  paths: [string, () => Promise<void>][],
  options: McpServeBenchOptions,
): Promise<Record<string, number[]>> {
  for (let i = 0; i < options.warmup; i++)
    for (const [, call] of paths) {
      await pause(options.pauseMs);
      await call();
    }
  const samples: Record<string, number[]> = Object.fromEntries(paths.map(([id]) => [id, []]));
  for (let round = 0; samples[paths[0]![0]]!.length < options.calls; round++) {
    for (let k = 0; k < paths.length; k++) {
      const [id, call] = paths[(k + round) % paths.length]!;
      for (let i = 0; i < options.block; i++) {
        await pause(options.pauseMs);
        const t0 = nowMs();
        await call();
        samples[id]!.push(nowMs() - t0);
      }
    }
  }
  return samples;
}

const check = (who: string) => (r: unknown) => {
  if ((r as { isError?: boolean }).isError) throw new Error(`${who}: ${JSON.stringify(r)}`);
};

/**
 * A bare SDK server over Streamable HTTP on loopback, in this process, one JSON body per POST;
 * `durable`: its tool makes the audit log's flush (the fixture's durable mode).
 */
async function bareHttpServer(
  durable: { file: string; bytes: number } | undefined,
): Promise<{ url: string; server: http.Server }> {
  const { bareTimeServer } = (await import(BARE)) as {
    bareTimeServer: (durable?: { file: string; bytes: number }) => Server;
  };
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server = http.createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (!transport) {
        const made = new StreamableHTTPServerTransport({
          // The agent's endpoint answers in JSON (app/mcp-serve/http.ts): so does the baseline.
          enableJsonResponse: true,
          sessionIdGenerator: () => `s${sessions.size + 1}`,
          onsessioninitialized: (id) => void sessions.set(id, made),
        });
        await bareTimeServer(durable).connect(made);
        transport = made;
      }
      await transport.handleRequest(req, res, body);
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`, server };
}

export async function runMcpServeBench(
  options: McpServeBenchOptions,
  log: (line: string) => void,
): Promise<McpServeBenchResult> {
  if (!existsSync(BUILT)) throw new Error('run `npm run build` first: dist/main/headless/cli.js');
  const [disk, ram] = media();
  const { dir, agent } = await openAgent(os.tmpdir());
  const inRam = ram ? await openAgent(ram.base) : undefined;
  const serve = new McpServe({
    agent,
    secrets: new MemorySecretStore(),
    dataDir: path.join(dir, 'data'),
    version: 'bench',
    log: () => undefined,
  });
  const clients: Client[] = [];
  const client = async (transport: Transport) => {
    const c = new Client({ name: 'bench', version: '1' });
    await c.connect(transport);
    clients.push(c);
    return c;
  };
  const bareServers: http.Server[] = [];
  const flushDir = await mkdtemp(path.join(os.tmpdir(), 'advent-bench-bare-'));
  try {
    // The size of the line the agent's log flushes for each call (measured, not assumed).
    const bytes = await auditLineBytes(disk!);
    const flushFile = (name: string) => path.join(flushDir, name);

    // stdio: every server is a child process of this one.
    const stdioAgent = await client(
      new StdioClientTransport({
        command: process.execPath,
        // The most the flag allows: the bench measures the gate, not the pace.
        args: [
          BIN,
          'mcp',
          '--data-dir',
          path.join(dir, 'stdio-data'),
          '--calls-per-second',
          '100000',
        ],
        stderr: 'ignore',
      }),
    );
    const stdioBare = await client(
      new StdioClientTransport({ command: process.execPath, args: [BARE], stderr: 'ignore' }),
    );
    const stdioDurable = await client(
      new StdioClientTransport({
        command: process.execPath,
        args: [BARE, '--durable', flushFile('stdio.jsonl'), String(bytes)],
        stderr: 'ignore',
      }),
    );

    // HTTP: every endpoint in this process, on loopback.
    await serve.applyHttp({ enabled: true, port: 0 });
    const state = serve.state();
    if (state.status !== 'listening')
      throw new Error(`HTTP did not start: ${JSON.stringify(state)}`);
    const token = await serve.httpToken();
    const httpAgent = await client(
      new StreamableHTTPClientTransport(new URL(state.url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const bare = await bareHttpServer(undefined);
    const durable = await bareHttpServer({ file: flushFile('http.jsonl'), bytes });
    bareServers.push(bare.server, durable.server);
    const httpBare = await client(new StreamableHTTPClientTransport(new URL(bare.url)));
    const httpDurable = await client(new StreamableHTTPClientTransport(new URL(durable.url)));
    log('   servers up: stdio (agent, bare, bare + fsync), HTTP (agent, bare, bare + fsync)');

    let n = 0;
    const gate = (a: typeof agent) => () =>
      a
        .dispatch({
          connection: { id: 'mcp:bench', name: 'bench' },
          dialect: 'mcp',
          callId: `g${++n}`,
          service: 'get_current_time',
          params: { format: 'simple' },
        })
        .then((r) => {
          if (!r.ok) throw new Error('gate call failed');
        });
    const samples = await timed(
      [
        ['stdioBare', () => stdioBare.callTool(CALL).then(check('bare stdio'))],
        ['stdioDurable', () => stdioDurable.callTool(CALL).then(check('bare + fsync stdio'))],
        ['stdioAgent', () => stdioAgent.callTool(CALL).then(check('agent stdio'))],
        ['httpBare', () => httpBare.callTool(CALL).then(check('bare http'))],
        ['httpDurable', () => httpDurable.callTool(CALL).then(check('bare + fsync http'))],
        ['httpAgent', () => httpAgent.callTool(CALL).then(check('agent http'))],
        ['gate', gate(agent)],
        ...(inRam ? [['gateRam', gate(inRam.agent)] as [string, () => Promise<void>]] : []),
      ],
      options,
    );
    log(`   ${samples.gate!.length} calls per path timed`);
    return {
      stdio: {
        bare: latency(samples.stdioBare!),
        durable: latency(samples.stdioDurable!),
        agent: latency(samples.stdioAgent!),
      },
      http: {
        bare: latency(samples.httpBare!),
        durable: latency(samples.httpDurable!),
        agent: latency(samples.httpAgent!),
      },
      gate: latency(samples.gate!),
      ...(samples.gateRam && { gateRam: latency(samples.gateRam) }),
      warmup: options.warmup,
    };
  } finally {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const server of bareServers) {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
    await serve.close();
    await agent.close();
    await inRam?.agent.close();
    await rm(dir, { recursive: true, force: true });
    if (inRam) await rm(inRam.dir, { recursive: true, force: true });
    await rm(flushDir, { recursive: true, force: true });
  }
}

const ms = (x: number) => x.toFixed(3);

/** The issue's target, each term measured: bare + one fsync (one round trip) + the gate in RAM. */
function verdict(agent: Latency, durable: Latency, gateRam: Latency | undefined): string {
  if (!gateRam)
    return `agent p50 ${ms(agent.p50)} ms; no RAM file system here to measure the gate without its disk`;
  const target = durable.p50 + gateRam.p50 + 0.2;
  return `agent p50 ${ms(agent.p50)} ms; target (bare + fsync ${ms(durable.p50)} + gate ${ms(gateRam.p50)} + 0.2): ${ms(target)} ms → ${agent.p50 <= target ? 'met' : 'missed'}`;
}

/** The stricter sum of parts measured apart: bare, and the gate on disk with its fsync. */
function partsVerdict(agent: Latency, bare: Latency, gate: Latency): string {
  const target = bare.p50 + gate.p50 + 0.2;
  return `${ms(agent.p50)} ms against bare ${ms(bare.p50)} + gate on disk ${ms(gate.p50)} + 0.2 = ${ms(target)} ms (${agent.p50 <= target ? 'within' : 'over'})`;
}

function rows(r: McpServeBenchResult): string[][] {
  const row = (label: string, l: Latency) => [label, ms(l.p50), ms(l.p99), ms(l.mean)];
  return [
    row('stdio: bare SDK server', r.stdio.bare),
    row("stdio: bare SDK server + the log's fsync", r.stdio.durable),
    row('stdio: advent-agent mcp (gate, audited)', r.stdio.agent),
    row('HTTP: bare SDK server', r.http.bare),
    row("HTTP: bare SDK server + the log's fsync", r.http.durable),
    row('HTTP: agent endpoint (gate, audited)', r.http.agent),
    row('gate alone, in process, audit on disk', r.gate),
    ...(r.gateRam ? [row('gate alone, in process, audit in RAM', r.gateRam)] : []),
  ];
}

export function mcpServeText(r: McpServeBenchResult): string {
  return [
    `\n6. The agent as an MCP server: get_current_time from the SDK Client, after ${r.warmup} calls of warm-up (ms: p50, p99, mean)`,
    ...rows(r).map(
      (c) =>
        `${c[0]!.padEnd(48)} ${c
          .slice(1)
          .map((v) => v.padStart(9))
          .join(' ')}`,
    ),
    `stdio: ${verdict(r.stdio.agent, r.stdio.durable, r.gateRam)}`,
    `HTTP:  ${verdict(r.http.agent, r.http.durable, r.gateRam)}`,
    `sum of parts apart: stdio ${partsVerdict(r.stdio.agent, r.stdio.bare, r.gate)}; HTTP ${partsVerdict(r.http.agent, r.http.bare, r.gate)}`,
    '',
  ].join('\n');
}

export function mcpServeMarkdown(r: McpServeBenchResult): string {
  return `
## The agent as an MCP server

\`get_current_time\` called with the SDK's \`Client\` over stdio (\`advent-agent mcp\`, the built
command running its own agent) and over Streamable HTTP (the agent's endpoint, bearer token and
all), each against bare SDK servers with the same tool on the same transport and, over HTTP,
the same response mode (one JSON body per POST), interleaved in one run, each call after the same
idle pause, each path timed after ${r.warmup} calls of warm-up (\`test/bench/mcp-serve.ts\`).

The target is agent p50 ≤ bare + gate + one fsync + 0.2 ms, each term measured:

- **bare + one fsync**: the bare server whose tool makes the one flush the agent's audit log makes
  for this call, made as the log makes it (the record's line written over room made ready past the
  last one, then fdatasync inline). It is measured as one round trip rather than as a sum of two
  apart, because on this machine a flush costs the code after it too: an idle vCPU halts
  (haltpoll) and wakes on cold caches (see "Beyond its fsync" above), and a bare server that
  flushes pays that as the agent does.
- **gate**: the gate alone, in process, with its audit log in RAM (tmpfs): the gate without the
  disk, whose flush the term above counts.

The stricter sum of parts measured apart (bare + the gate with its log on disk + 0.2 ms) is given
beside it.

| path | p50 ms | p99 ms | mean ms |
| --- | ---: | ---: | ---: |
${rows(r)
  .map((c) => `| ${c.join(' | ')} |`)
  .join('\n')}

- stdio: ${verdict(r.stdio.agent, r.stdio.durable, r.gateRam)}
- HTTP: ${verdict(r.http.agent, r.http.durable, r.gateRam)}
- Sum of parts measured apart: stdio ${partsVerdict(r.stdio.agent, r.stdio.bare, r.gate)}; HTTP ${partsVerdict(r.http.agent, r.http.bare, r.gate)}.
`;
}
