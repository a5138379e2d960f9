/**
 * MCP servers at an address may not send one message larger than a stdio server may
 * (MCP_LIMITS.messageBytes): loopback servers, some built with the SDK, some hostile by hand, that
 * send an endless SSE event or JSON body. The connection fails saying why; the agent stays usable.
 */
import { type ServerResponse, type Server as HttpServer, createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { boundedFetch, lfLineEnds, sseMeter } from '../../../app/services/mcp/bounded-fetch.js';
import { MCP_LIMITS } from '../../../app/services/mcp/limits.js';
import {
  type McpAgent,
  importConfig,
  listenLoopback,
  openMcpAgent,
  ready,
  serverState,
} from './helpers.js';

const LIMIT = MCP_LIMITS.messageBytes;
const MB = 1024 * 1024;
/** How much a hostile server offers: enough to tell a bound from none, then it stalls. */
const OFFER = 3 * LIMIT;

interface Running {
  url: string;
  /** Bytes the hostile server got to write before the agent hung up (or it stalled). */
  sent: () => number;
  close(): Promise<void>;
}

async function listen(http: HttpServer, path: string, sent: () => number): Promise<Running> {
  return { ...(await listenLoopback(http, path)), sent };
}

/** Write `chunk` again and again until `limit` bytes are out or the client hangs up. */
function flood(res: ServerResponse, chunk: string, limit: number, count: (n: number) => void) {
  let sent = 0;
  let gone = false;
  res.on('close', () => (gone = true));
  const pump = () => {
    while (!gone && sent < limit) {
      sent += chunk.length;
      count(chunk.length);
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  pump();
}

/** Answers `initialize` (a POST) with one SSE event that never ends, or one endless JSON body. */
async function hostileStreamable(kind: 'sse' | 'json'): Promise<Running> {
  let sent = 0;
  const http = createServer((req, res) => {
    req.resume();
    if (req.method !== 'POST') return void res.writeHead(405).end();
    if (kind === 'sse') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Data lines, never the empty line that would end the event.
      flood(res, `data: ${'A'.repeat(MB - 7)}\n`, OFFER, (n) => (sent += n));
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"jsonrpc":"2.0","id":0,"result":{"padding":"');
      flood(res, 'A'.repeat(MB), OFFER, (n) => (sent += n));
    }
  });
  return listen(http, '/mcp', () => sent);
}

/** The older HTTP+SSE transport: the endpoint event, then one event that never ends. */
async function hostileSse(): Promise<Running> {
  let sent = 0;
  const http = createServer((req, res) => {
    req.resume();
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: /messages\n\n');
      flood(res, `data: ${'A'.repeat(MB - 7)}\n`, OFFER, (n) => (sent += n));
      return;
    }
    res.writeHead(202).end();
  });
  return listen(http, '/sse', () => sent);
}

/** An SDK server on the older HTTP+SSE transport whose `big` tool answers with N bytes. */
async function sdkSseServer(): Promise<Running> {
  const transports = new Map<string, SSEServerTransport>();
  const http = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (req.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', res);
        transports.set(transport.sessionId, transport);
        const server = new Server(
          { name: 'big', version: '1.0.0' },
          { capabilities: { tools: {} } },
        );
        server.setRequestHandler(ListToolsRequestSchema, async () => ({
          tools: [
            {
              name: 'big',
              description: 'Answers with a text of the given number of bytes.',
              inputSchema: { type: 'object', properties: { bytes: { type: 'integer' } } },
            },
          ],
        }));
        server.setRequestHandler(CallToolRequestSchema, async (request) => ({
          content: [{ type: 'text', text: 'x'.repeat(Number(request.params.arguments?.bytes)) }],
        }));
        await server.connect(transport);
        return;
      }
      const transport = transports.get(url.searchParams.get('sessionId') ?? '');
      if (req.method === 'POST' && transport) return transport.handlePostMessage(req, res);
      res.writeHead(404).end();
    })();
  });
  return listen(http, '/sse', () => 0);
}

let h: McpAgent | undefined;
let running: Running | undefined;
afterEach(async () => {
  await h?.close();
  await running?.close();
  h = running = undefined;
});

const failed = (v: { state: { status: string } }) => v.state.status === 'failed';
const overLimit = /^it sent a message over 16 MB, the most one MCP message may be/;

async function expectAgentUsable(m: McpAgent): Promise<void> {
  expect(await m.agent.runService('get_current_time', {})).toMatchObject({ ok: true });
}

describe('a server at an address sending one message too large', () => {
  it('Streamable HTTP: an SSE event that never ends fails the connection, naming the limit', async () => {
    running = await hostileStreamable('sse');
    h = await openMcpAgent();
    await importConfig(h.agent, h.dir, { endless: { type: 'http', url: running.url } });
    const view = await serverState(h.agent, 'endless', failed);
    expect(view.state).toMatchObject({ reason: expect.stringMatching(overLimit) });
    // The agent hung up soon after the limit instead of reading on.
    expect(running.sent()).toBeLessThan(OFFER);
    await expectAgentUsable(h);
  });

  it('Streamable HTTP: a JSON answer over the limit fails the connection, naming the limit', async () => {
    running = await hostileStreamable('json');
    h = await openMcpAgent();
    await importConfig(h.agent, h.dir, { bloated: { type: 'http', url: running.url } });
    const view = await serverState(h.agent, 'bloated', failed);
    expect(view.state).toMatchObject({ reason: expect.stringMatching(overLimit) });
    expect(running.sent()).toBeLessThan(OFFER);
    await expectAgentUsable(h);
  });

  it('HTTP+SSE: an event that never ends fails the connection, naming the limit', async () => {
    running = await hostileSse();
    h = await openMcpAgent();
    await importConfig(h.agent, h.dir, { legacy: { type: 'sse', url: running.url } });
    const view = await serverState(h.agent, 'legacy', failed);
    expect(view.state).toMatchObject({ reason: expect.stringMatching(overLimit) });
    expect(running.sent()).toBeLessThan(OFFER);
    await expectAgentUsable(h);
  });

  it('HTTP+SSE: many answers on one stream are fine; one over the limit is refused with the reason and the agent stays usable', async () => {
    running = await sdkSseServer();
    h = await openMcpAgent();
    await importConfig(h.agent, h.dir, { big: { type: 'sse', url: running.url } });
    await serverState(h.agent, 'big', ready);
    // More than the limit in all, on the one long-lived stream: counted per message.
    for (let i = 0; i < 20; i += 1)
      expect(await h.agent.runService('big_big', { bytes: MB })).toMatchObject({ ok: true });
    const refused = await h.agent.runService('big_big', { bytes: LIMIT + MB });
    expect(refused).toMatchObject({
      ok: false,
      message: expect.stringContaining('over 16 MB, the most one MCP message may be'),
    });
    const view = await serverState(h.agent, 'big', (v) => v.state.status !== 'ready');
    expect(view.state).toMatchObject({ reason: expect.stringMatching(overLimit) });
    await expectAgentUsable(h);
  });
});

describe('counting an SSE stream per event', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);

  it('an event ends at an empty line whatever the line endings, even within one chunk', () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const over = sseMeter(20);
      const event = `data: ${'x'.repeat(10)}${eol}${eol}`;
      expect(over(bytes(event.repeat(50)))).toBe(false);
      // Split anywhere, even inside a CRLF.
      const long = bytes(event.repeat(3));
      expect(over(long.subarray(0, 17)) || over(long.subarray(17))).toBe(false);
    }
  });

  it('an event over the bound is found even when the next one starts in the same chunk', () => {
    const over = sseMeter(20);
    expect(over(bytes(`data: ${'x'.repeat(30)}\n\ndata: y\n\n`))).toBe(true);
    const lines = sseMeter(20);
    expect(lines(bytes('data: 1234567\n'))).toBe(false);
    expect(lines(bytes('data: 1234567\n'))).toBe(true);
  });
});

describe('SSE line ends, as the SDK reads them', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);
  const text = (chunks: Uint8Array[]) => Buffer.concat(chunks).toString('utf8');

  it('turns CR and CRLF line ends into LF, a CRLF split across chunks included, and leaves LF as it is', () => {
    const lf = lfLineEnds();
    const chunks = ['data: a\r\r', 'data: b\r', '\n\r\n', 'data: 中\n\n', 'x\r', 'y\n'].map((c) =>
      lf(bytes(c)),
    );
    expect(text(chunks)).toBe('data: a\n\ndata: b\n\ndata: 中\n\nx\ny\n');
    // A chunk with no CR is passed on as it is, not copied.
    const plain = bytes('data: c\n\n');
    expect(lfLineEnds()(plain)).toBe(plain);
  });

  it('a CR-only event stream reaches the SDK with LF line ends and the same events', async () => {
    const stream = 'event: message\rdata: {"n":1}\r\rdata: {"n":2}\r\r'.repeat(1000);
    const base = (async () =>
      new Response(stream, {
        headers: { 'content-type': 'text/event-stream' },
      })) as unknown as typeof fetch;
    const response = await boundedFetch(base, LIMIT, () => undefined)('http://127.0.0.1/mcp');
    const body = await response.text();
    expect(body).not.toContain('\r');
    expect(body).toBe(stream.replaceAll('\r', '\n'));
  });
});
