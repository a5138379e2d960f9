/**
 * A server at an address whose event stream ends as soon as it opens, saying `retry: 0`: the SDK
 * reopened it at once every time (its retry count starts over after each stream that opened), so
 * the agent sent ~600 GETs a second for as long as the server was imported, its row still "ready"
 * and its log empty. Now each GET waits for a gap that doubles while streams keep ending at once,
 * and after a few in a row the stream is given up, the log saying why; calls keep working.
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_EVENT_STREAM_PACING,
  type EventStreamPacing,
  type StreamKeepsEnding,
  boundedFetch,
} from '../../../app/services/mcp/bounded-fetch.js';
import { MCP_LIMITS } from '../../../app/services/mcp/limits.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { until } from '../../helpers/wait.js';
import {
  FAST_MCP,
  type McpAgent,
  importConfig,
  listenLoopback,
  openMcpAgent,
  ready,
  serverState,
} from './helpers.js';

const FAST_PACING: EventStreamPacing = { firstGapMs: 20, maxGapMs: 80, quickMs: 1000, maxQuick: 4 };
const kept = /^its event stream kept ending at once \(\d+ times in a row, each within [\d.]+ m?s\)/;

interface Hostile {
  url: string;
  gets(): number;
  close(): Promise<void>;
}

function answer(res: ServerResponse, id: unknown, result: unknown, session?: string) {
  res.writeHead(200, {
    'content-type': 'application/json',
    ...(session ? { 'mcp-session-id': session } : {}),
  });
  res.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
}

interface Rpc {
  id?: unknown;
  method?: string;
  params?: { protocolVersion?: string };
}

async function readRpc(req: IncomingMessage): Promise<Rpc> {
  let body = '';
  for await (const c of req) body += (c as Buffer).toString();
  return JSON.parse(body) as Rpc;
}

function resultOf(m: Rpc): unknown {
  if (m.method === 'initialize')
    return {
      protocolVersion: m.params?.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: 'hostile', version: '1' },
    };
  if (m.method === 'tools/list')
    return { tools: [{ name: 'echo', inputSchema: { type: 'object', properties: {} } }] };
  return { content: [{ type: 'text', text: 'still here' }] };
}

/** Streamable HTTP: every call answered as JSON; every GET a stream that says retry: 0 and ends. */
async function hostileStreamable(): Promise<Hostile> {
  let gets = 0;
  const http = createServer((req, res) => {
    if (req.method === 'GET') {
      gets += 1;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
      return void res.end('retry: 0\n\n');
    }
    if (req.method !== 'POST') return void res.writeHead(200).end();
    void readRpc(req).then((m) => {
      if (m.id === undefined) return void res.writeHead(202, { 'mcp-session-id': 's1' }).end();
      answer(res, m.id, resultOf(m), 's1');
    });
  });
  return { ...(await listenLoopback(http, '/mcp')), gets: () => gets };
}

/**
 * The older HTTP+SSE transport, where answers come on the stream: each stream stays open until
 * the tools are listed, then ends; every later stream ends right after its endpoint, retry: 0.
 */
async function hostileSse(): Promise<Hostile> {
  let gets = 0;
  const streams = new Map<string, { res: ServerResponse; listed: boolean }>();
  const http = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET') {
      gets += 1;
      const id = String(gets);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`retry: 0\nevent: endpoint\ndata: /messages?s=${id}\n\n`);
      const listed = [...streams.values()].some((s) => s.listed);
      if (listed) return void res.end();
      streams.set(id, { res, listed: false });
      return;
    }
    const stream = streams.get(url.searchParams.get('s') ?? '');
    void readRpc(req).then((m) => {
      res.writeHead(202).end();
      if (!stream || m.id === undefined) return;
      stream.res.write(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: resultOf(m) })}\n\n`,
      );
      if (m.method === 'tools/list') {
        stream.listed = true;
        stream.res.end();
      }
    });
  });
  return { ...(await listenLoopback(http, '/sse')), gets: () => gets };
}

let h: McpAgent | undefined;
let running: Hostile | undefined;
afterEach(async () => {
  await h?.close();
  await running?.close();
  h = running = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logOf = (m: McpAgent, name: string) => {
  const view = m.agent.mcp.list().find((v) => v.name === name)!;
  return m.agent.mcp.log(view.id).map((l) => l.text);
};

describe('a Streamable HTTP server whose event stream ends at once, retry: 0', () => {
  it('is reopened a handful of times in 3 s, not thousands, and its tool still works', async () => {
    running = await hostileStreamable();
    h = await openMcpAgent();
    await importConfig(h.agent, h.dir, { remote: { type: 'http', url: running.url } });
    await serverState(h.agent, 'remote', ready);
    await sleep(3000);
    // 1 s, then 2 s after the first: at most 3 GETs (the first, +1 s, +3 s).
    expect(running.gets()).toBeGreaterThanOrEqual(2);
    expect(running.gets()).toBeLessThanOrEqual(4);
    expect(h.agent.mcp.list()[0]!.state).toMatchObject({ status: 'ready' });
    expect(await h.agent.runService('remote_echo', {})).toMatchObject({ ok: true });
  });

  it('is given up after a few quick ends in a row, the log saying why; calls keep working', async () => {
    running = await hostileStreamable();
    h = await openMcpAgent({ mcp: { timing: { ...FAST_MCP, eventStream: FAST_PACING } } });
    await importConfig(h.agent, h.dir, { remote: { type: 'http', url: running.url } });
    await serverState(h.agent, 'remote', ready);
    await until(() => logOf(h!, 'remote').some((l) => kept.test(l)), 'the reason in the log', 5000);
    const line = logOf(h, 'remote').find((l) => kept.test(l))!;
    expect(line).toContain('4 times in a row');
    expect(line).toContain('a change to its tools is seen only after a restart');
    await sleep(1000);
    // No GET after giving up, however long it stays imported.
    expect(running.gets()).toBe(FAST_PACING.maxQuick);
    expect(logOf(h, 'remote').filter((l) => kept.test(l))).toHaveLength(1);
    expect(h.agent.mcp.list()[0]!.state).toMatchObject({ status: 'ready', tools: 1 });
    expect(await h.agent.runService('remote_echo', {})).toMatchObject({ ok: true });
  });
});

describe('an HTTP+SSE server whose event stream ends at once, retry: 0', () => {
  it('has its connection closed with the reason: its answers come on that stream', async () => {
    running = await hostileSse();
    h = await openMcpAgent({ mcp: { timing: { ...FAST_MCP, eventStream: FAST_PACING } } });
    await importConfig(h.agent, h.dir, { legacy: { type: 'sse', url: running.url } });
    const view = await serverState(
      h.agent,
      'legacy',
      (v) => v.state.status === 'restarting' || v.state.status === 'failed',
    );
    expect(view.state).toMatchObject({ reason: expect.stringMatching(kept) });
    expect(running.gets()).toBeLessThan(50);
  });
});

describe('pacing the GETs of one connection', () => {
  const sse = { 'content-type': 'text/event-stream' };
  /** A fetch whose GETs answer an SSE stream ending at once, and whose POSTs answer JSON. */
  function rig(
    pacing: EventStreamPacing = DEFAULT_EVENT_STREAM_PACING,
    stream: () => string | ReadableStream<Uint8Array> = () => 'retry: 0\n\n',
  ) {
    const clock = new FakeClock(10_000);
    const seen: string[] = [];
    const gaveUp: StreamKeepsEnding[] = [];
    const base = (async (_input: unknown, init?: RequestInit) => {
      seen.push(init?.method ?? 'GET');
      return init?.method === 'POST'
        ? new Response('{}', { headers: { 'content-type': 'application/json' } })
        : new Response(stream(), { headers: sse });
    }) as typeof fetch;
    const fetch = boundedFetch(
      base,
      MCP_LIMITS.messageBytes,
      () => undefined,
      { maxWaiting: 4, timeoutMs: () => 30_000, clock },
      { pacing, gaveUp: (err) => gaveUp.push(err) },
    );
    return { clock, seen, gaveUp, fetch };
  }
  /** Whether `p` has settled once the microtasks queued so far have run. */
  async function settled(p: Promise<unknown>): Promise<boolean> {
    let done = false;
    p.then(
      () => (done = true),
      () => (done = true),
    );
    await sleep(0);
    return done;
  }

  it('waits a gap that doubles with each quick end, then answers 405 and tells once', async () => {
    const { clock, seen, gaveUp, fetch } = rig();
    const { firstGapMs, maxGapMs, maxQuick } = DEFAULT_EVENT_STREAM_PACING;
    await (await fetch('http://127.0.0.1/mcp', { method: 'GET' })).text();
    const waits: number[] = [];
    for (let n = 1; n < maxQuick; n += 1) {
      const asked = clock.now();
      const get = fetch('http://127.0.0.1/mcp', { method: 'GET' });
      while (!(await settled(get))) expect(clock.runNext()).toBe(true);
      waits.push(clock.now() - asked);
      await (await get).text();
    }
    expect(waits).toEqual(
      Array.from({ length: maxQuick - 1 }, (_, i) => Math.min(firstGapMs * 2 ** i, maxGapMs)),
    );
    expect(seen).toHaveLength(maxQuick);
    for (let n = 0; n < 3; n += 1) {
      const refused = await fetch('http://127.0.0.1/mcp', { method: 'GET' });
      expect(refused.status).toBe(405);
    }
    expect(seen).toHaveLength(maxQuick);
    expect(gaveUp).toHaveLength(1);
    expect(gaveUp[0]!.message).toMatch(kept);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a waiting GET ends at once when the connection closes, leaving no timer', async () => {
    const { clock, seen, fetch } = rig();
    await (await fetch('http://127.0.0.1/mcp')).text();
    const closing = new AbortController();
    const get = fetch('http://127.0.0.1/mcp', { method: 'GET', signal: closing.signal });
    expect(await settled(get)).toBe(false);
    closing.abort();
    await expect(get).rejects.toMatchObject({ name: 'AbortError' });
    expect(clock.pendingTimers()).toBe(0);
    expect(seen).toEqual(['GET']);
  });

  it('POSTs are not held back by a waiting GET', async () => {
    const { seen, fetch } = rig();
    await (await fetch('http://127.0.0.1/mcp')).text();
    const get = fetch('http://127.0.0.1/mcp');
    const post = await fetch('http://127.0.0.1/mcp', { method: 'POST', body: '{}' });
    expect(await post.text()).toBe('{}');
    expect(await settled(get)).toBe(false);
    expect(seen).toEqual(['GET', 'POST']);
  });

  it('a stream that lasted starts the count over: quick ends apart from it never give up', async () => {
    let held: ReadableStreamDefaultController<Uint8Array> | undefined;
    const { clock, seen, gaveUp, fetch } = rig(FAST_PACING, () =>
      seen.length % FAST_PACING.maxQuick === 0
        ? new ReadableStream<Uint8Array>({ start: (c) => void (held = c) })
        : 'retry: 0\n\n',
    );
    for (let n = 0; n < 3 * FAST_PACING.maxQuick; n += 1) {
      // Late enough that no GET waits: only the count is at stake.
      clock.advance(FAST_PACING.maxGapMs);
      const response = await fetch('http://127.0.0.1/mcp');
      expect(response.status).toBe(200);
      const body = response.text();
      if (held) {
        clock.advance(FAST_PACING.quickMs);
        held.close();
        held = undefined;
      }
      await body;
    }
    expect(seen).toHaveLength(3 * FAST_PACING.maxQuick);
    expect(gaveUp).toHaveLength(0);
  });
});
