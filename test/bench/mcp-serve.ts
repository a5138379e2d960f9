/**
 * The agent as an MCP server for other apps (issue 12): `get_current_time` from the SDK's Client
 * over stdio (`advent-agent mcp`, the built command, its own agent in a child process) and over
 * Streamable HTTP (the agent's endpoint), each against a bare SDK server with the same tool on the
 * same transport (test/fixtures/mcp-bare-time-server.mjs), interleaved in blocks in one run. The
 * gate alone (get_current_time dispatched in process, audited with its fsync) is measured
 * alongside: the target is agent p50 ≤ bare p50 + gate p50 + 0.2 ms.
 *
 * Like for like: the bare HTTP server answers in the same response mode as the agent's endpoint
 * (one JSON body per POST, `enableJsonResponse`), and every call on every path starts after the
 * same idle pause (see mcp.ts: back to back, a process still awake from its previous answer is
 * faster to reach than one a call's fsync left idle).
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import { rm } from 'node:fs/promises';
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
import { pause } from './mcp.js';
import { openAgent } from './rig.js';
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

export const DEFAULT_MCP_SERVE: McpServeBenchOptions = {
  warmup: 200,
  calls: 1000,
  block: 50,
  pauseMs: 1,
};

export interface McpServeBenchResult {
  stdio: { bare: Latency; agent: Latency };
  http: { bare: Latency; agent: Latency };
  gate: Latency;
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

export async function runMcpServeBench(
  options: McpServeBenchOptions,
  log: (line: string) => void,
): Promise<McpServeBenchResult> {
  if (!existsSync(BUILT)) throw new Error('run `npm run build` first: dist/main/headless/cli.js');
  const { dir, agent } = await openAgent(os.tmpdir());
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
  const bareHttp = http.createServer();
  try {
    // stdio: both servers are child processes of this one.
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

    // HTTP: both endpoints in this process, on loopback.
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
    const { bareTimeServer } = (await import(BARE)) as { bareTimeServer: () => Server };
    const bareSessions = new Map<string, StreamableHTTPServerTransport>();
    bareHttp.on('request', (req, res) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
        const sid = req.headers['mcp-session-id'];
        let transport = typeof sid === 'string' ? bareSessions.get(sid) : undefined;
        if (!transport) {
          const made = new StreamableHTTPServerTransport({
            // The agent's endpoint answers in JSON (app/mcp-serve/http.ts): so does the baseline.
            enableJsonResponse: true,
            sessionIdGenerator: () => `s${bareSessions.size + 1}`,
            onsessioninitialized: (id) => void bareSessions.set(id, made),
          });
          await bareTimeServer().connect(made);
          transport = made;
        }
        await transport.handleRequest(req, res, body);
      })();
    });
    await new Promise<void>((r) => bareHttp.listen(0, '127.0.0.1', () => r()));
    const bareUrl = `http://127.0.0.1:${(bareHttp.address() as { port: number }).port}/mcp`;
    const httpBare = await client(new StreamableHTTPClientTransport(new URL(bareUrl)));
    log('   servers up: stdio (agent, bare), HTTP (agent, bare)');

    let n = 0;
    const samples = await timed(
      [
        ['stdioBare', () => stdioBare.callTool(CALL).then(check('bare stdio'))],
        ['stdioAgent', () => stdioAgent.callTool(CALL).then(check('agent stdio'))],
        ['httpBare', () => httpBare.callTool(CALL).then(check('bare http'))],
        ['httpAgent', () => httpAgent.callTool(CALL).then(check('agent http'))],
        [
          'gate',
          () =>
            agent
              .dispatch({
                connection: { id: 'mcp:bench', name: 'bench' },
                dialect: 'mcp',
                callId: `g${++n}`,
                service: 'get_current_time',
                params: { format: 'simple' },
              })
              .then((r) => {
                if (!r.ok) throw new Error('gate call failed');
              }),
        ],
      ],
      options,
    );
    log(`   ${samples.gate!.length} calls per path timed`);
    return {
      stdio: { bare: latency(samples.stdioBare!), agent: latency(samples.stdioAgent!) },
      http: { bare: latency(samples.httpBare!), agent: latency(samples.httpAgent!) },
      gate: latency(samples.gate!),
    };
  } finally {
    for (const c of clients) await c.close().catch(() => undefined);
    bareHttp.closeAllConnections();
    await new Promise<void>((r) => bareHttp.close(() => r()));
    await serve.close();
    await agent.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const ms = (x: number) => x.toFixed(3);

function verdict(agent: Latency, bare: Latency, gate: Latency): string {
  const target = bare.p50 + gate.p50 + 0.2;
  return `agent p50 ${ms(agent.p50)} ms; target (bare ${ms(bare.p50)} + gate ${ms(gate.p50)} + 0.2): ${ms(target)} ms → ${agent.p50 <= target ? 'met' : 'missed'}`;
}

function rows(r: McpServeBenchResult): string[][] {
  const row = (label: string, l: Latency) => [label, ms(l.p50), ms(l.p99), ms(l.mean)];
  return [
    row('stdio: bare SDK server', r.stdio.bare),
    row('stdio: advent-agent mcp (gate, audited)', r.stdio.agent),
    row('HTTP: bare SDK server', r.http.bare),
    row('HTTP: agent endpoint (gate, audited)', r.http.agent),
    row('gate alone, in process (audited)', r.gate),
  ];
}

export function mcpServeText(r: McpServeBenchResult): string {
  return [
    '\n6. The agent as an MCP server: get_current_time from the SDK Client (ms: p50, p99, mean)',
    ...rows(r).map(
      (c) =>
        `${c[0]!.padEnd(48)} ${c
          .slice(1)
          .map((v) => v.padStart(9))
          .join(' ')}`,
    ),
    `stdio: ${verdict(r.stdio.agent, r.stdio.bare, r.gate)}`,
    `HTTP:  ${verdict(r.http.agent, r.http.bare, r.gate)}`,
    '',
  ].join('\n');
}

export function mcpServeMarkdown(r: McpServeBenchResult): string {
  return `
## The agent as an MCP server

\`get_current_time\` called with the SDK's \`Client\` over stdio (\`advent-agent mcp\`, the built
command running its own agent) and over Streamable HTTP (the agent's endpoint, bearer token and
all), each against a bare SDK server with the same tool on the same transport and, over HTTP,
the same response mode (one JSON body per POST), interleaved in one run, each call after the same
idle pause (\`test/bench/mcp-serve.ts\`). The gate alone (dispatched in process, audited with its fsync)
is measured alongside; the target is agent p50 ≤ bare p50 + gate p50 + 0.2 ms.

| path | p50 ms | p99 ms | mean ms |
| --- | ---: | ---: | ---: |
${rows(r)
  .map((c) => `| ${c.join(' | ')} |`)
  .join('\n')}

- stdio: ${verdict(r.stdio.agent, r.stdio.bare, r.gate)}
- HTTP: ${verdict(r.http.agent, r.http.bare, r.gate)}
`;
}
