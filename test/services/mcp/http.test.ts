/**
 * MCP servers at an address: a Streamable HTTP server and an older HTTP+SSE one, both built with
 * the SDK inside the test on loopback. The bearer token in a header is a secret: it reaches the
 * server but never settings; an entry without `type` falls back to SSE when Streamable HTTP fails.
 */
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server as HttpServer, createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type McpAgent,
  importConfig,
  listenLoopback,
  openMcpAgent,
  ready,
  serverState,
  settingsText,
} from './helpers.js';

const TOKEN = ['bearer', 'secret', '9f8e7d'].join('-');

/** An SDK Server with one tool, `whoami`, answering what the request's Authorization said. */
function mcpServer(auth: () => string | undefined): Server {
  const server = new Server(
    { name: 'http-test', version: '2.0.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: 'whoami',
        description: 'Says whether the caller sent the right token.',
        inputSchema: { type: 'object', properties: {} },
        annotations: { readOnlyHint: true },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async () => ({
    content: [{ type: 'text', text: auth() === `Bearer ${TOKEN}` ? 'authorised' : 'anonymous' }],
  }));
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

interface Running {
  url: string;
  requests: string[];
  close(): Promise<void>;
}

async function listen(server: HttpServer, path: string, requests: string[]): Promise<Running> {
  return { ...(await listenLoopback(server, path)), requests };
}

/** Streamable HTTP with sessions, the current transport. */
async function streamableServer(): Promise<Running> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const requests: string[] = [];
  let lastAuth: string | undefined;
  const http = createServer((req, res) => {
    void (async () => {
      requests.push(`${req.method} ${req.url}`);
      lastAuth = req.headers.authorization;
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (!transport) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => void sessions.set(sid, transport!),
        });
        await mcpServer(() => lastAuth).connect(transport);
      }
      await transport.handleRequest(req, res, body);
    })();
  });
  return listen(http, '/mcp', requests);
}

/** The older HTTP+SSE transport only: a POST to the address is refused, as such servers do. */
async function sseOnlyServer(): Promise<Running> {
  const transports = new Map<string, SSEServerTransport>();
  const requests: string[] = [];
  let lastAuth: string | undefined;
  const http = createServer((req, res) => {
    void (async () => {
      requests.push(`${req.method} ${req.url}`);
      if (req.headers.authorization) lastAuth = req.headers.authorization;
      const url = new URL(req.url ?? '/', 'http://x');
      if (req.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', res);
        transports.set(transport.sessionId, transport);
        await mcpServer(() => lastAuth).connect(transport);
        return;
      }
      if (req.method === 'POST' && url.pathname === '/messages') {
        const transport = transports.get(url.searchParams.get('sessionId') ?? '');
        if (transport) return transport.handlePostMessage(req, res, await readBody(req));
      }
      res.writeHead(405).end('Method Not Allowed');
    })();
  });
  return listen(http, '/sse', requests);
}

let h: McpAgent | undefined;
let running: Running | undefined;
afterEach(async () => {
  await h?.close();
  await running?.close();
  h = running = undefined;
});

describe('MCP servers at an address', () => {
  it('Streamable HTTP: the bearer token reaches the server and stays out of settings', async () => {
    running = await streamableServer();
    h = await openMcpAgent();
    const [view] = await importConfig(h.agent, h.dir, {
      remote: { url: running.url, headers: { Authorization: `Bearer ${TOKEN}` } },
    });
    const ok = await serverState(h.agent, 'remote', ready);
    expect(ok).toMatchObject({
      transport: 'http',
      secretHeaders: ['Authorization'],
      headers: {},
      serverInfo: { name: 'http-test', version: '2.0.0' },
      tools: [{ tool: 'whoami', service: 'remote_whoami' }],
    });
    expect(await h.agent.runService('remote_whoami', {})).toMatchObject({
      ok: true,
      data: 'authorised',
    });
    expect(await h.secrets.get(`mcp:${view!.id}:header:Authorization`)).toBe(`Bearer ${TOKEN}`);
    expect(await settingsText(h.dataDir)).not.toContain(TOKEN);
    expect(running.requests.every((r) => r.endsWith('/mcp'))).toBe(true);
  });

  it('an older server speaking only HTTP+SSE is reached by falling back from Streamable HTTP', async () => {
    running = await sseOnlyServer();
    h = await openMcpAgent();
    const [view] = await importConfig(h.agent, h.dir, {
      legacy: { url: running.url, headers: { Authorization: `Bearer ${TOKEN}` } },
    });
    await serverState(h.agent, 'legacy', ready);
    expect(await h.agent.runService('legacy_whoami', {})).toMatchObject({
      ok: true,
      data: 'authorised',
    });
    // Tried Streamable HTTP first (a POST to the address), then the SSE stream.
    expect(running.requests[0]).toBe('POST /sse');
    expect(running.requests).toContain('GET /sse');
    expect(h.agent.mcp.log(view!.id).map((l) => l.text)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Streamable HTTP did not work .*; trying SSE$/),
      ]),
    );
  });

  it('"type": "http" is taken at its word: no fallback, the failure is shown on its row', async () => {
    running = await sseOnlyServer();
    h = await openMcpAgent();
    await importConfig(h.agent, h.dir, { strict: { type: 'http', url: running.url } });
    const failed = await serverState(h.agent, 'strict', (v) => v.state.status === 'failed');
    expect(failed.state.status === 'failed' && failed.state.reason).toBe(
      'Streamable HTTP error: Error POSTing to endpoint: Method Not Allowed',
    );
    expect(running.requests).not.toContain('GET /sse');
  });
});
