import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { logEndpointSim } from '../../sim/endpoint/log.js';
import { EndpointSim, type EndpointSimOptions } from '../../sim/endpoint/server.js';
import { nextEvent, until } from '../helpers/wait.js';

/**
 * The simulator's own tests drive it with a scripted "agent": a bare `ws` client whose answers
 * each test writes, so the simulator's checks can be proven against replies that break the rules.
 */
type Params = {
  cursor?: string;
  withUserTools?: boolean;
  name?: string;
  arguments?: Record<string, unknown>;
};
type Msg = Record<string, unknown> & { id?: unknown; method?: string; params?: Params };
type Answer = (msg: Msg, send: (reply: unknown) => void) => void;

interface Scripted {
  ws: WebSocket;
  /** Every message the simulator sent, in order. */
  got: Msg[];
}

let sim: EndpointSim | undefined;
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await sim?.stop();
  sim = undefined;
});

async function startSim(opts: EndpointSimOptions = {}): Promise<EndpointSim> {
  sim = await EndpointSim.start({ token: 'sim-tok', ...opts });
  return sim;
}

const tool = (name: string, description = `does ${name}`) => ({
  name,
  description,
  inputSchema: { type: 'object', properties: {} },
});

/** A well-behaved agent with these tools on one page (or the pages given). */
function politeAgent(pages: Array<ReturnType<typeof tool>[]>, extra?: Answer): Answer {
  return (msg, send) => {
    if (msg.method === 'initialize')
      send({
        jsonrpc: '2.0',
        id: msg.id,
        result: {
          protocolVersion: '2024-11-05',
          capabilities: { tools: { listChanged: true } },
          serverInfo: { name: 'scripted', version: '0' },
        },
      });
    else if (msg.method === 'tools/list') {
      const cursor = msg.params?.cursor;
      const index = cursor ? pages.findIndex((p) => p[0]!.name === cursor) : 0;
      const next = pages[index + 1]?.[0]?.name;
      send({
        jsonrpc: '2.0',
        id: msg.id,
        result: { tools: pages[index], ...(next ? { nextCursor: next } : {}) },
      });
    } else extra?.(msg, send);
  };
}

function dial(url: string, answer: Answer): Promise<Scripted> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    sockets.push(ws);
    const got: Msg[] = [];
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as Msg;
      got.push(msg);
      answer(msg, (reply) => ws.send(typeof reply === 'string' ? reply : JSON.stringify(reply)));
    });
    ws.on('open', () => resolve({ ws, got }));
    ws.on('error', reject);
  });
}

/** The HTTP status the simulator answers an upgrade with. */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    sockets.push(ws);
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    ws.on('error', () => undefined);
    ws.on('open', () => resolve(101));
  });
}

describe('EndpointSim: the address', () => {
  it('is a loopback ws:// URL with the mcp_endpoint path and the token', async () => {
    const s = await startSim({ token: 'a b&c' });
    expect(s.url).toBe(`ws://127.0.0.1:${s.port}/mcp_endpoint/mcp/?token=a%20b%26c`);
  });

  it('refuses a wrong or missing token with HTTP 401 and an unknown path with 404', async () => {
    const s = await startSim();
    expect(await upgradeStatus(s.url.replace('sim-tok', 'nope'))).toBe(401);
    expect(await upgradeStatus(s.url.replace('?token=sim-tok', ''))).toBe(401);
    expect(await upgradeStatus(s.url.replace('/mcp_endpoint/mcp/', '/other/'))).toBe(404);
    expect(s.connections).toBe(0);
    expect(await upgradeStatus(s.url)).toBe(101);
    expect(s.connections).toBe(1);
  });
});

describe('EndpointSim: the handshake', () => {
  it('initializes, says initialized, then lists every page following nextCursor', async () => {
    const s = await startSim();
    const pages = [[tool('a'), tool('b')], [tool('c')], [tool('d')]];
    const agent = await dial(s.url, politeAgent(pages));
    const tools = await s.waitForTools((t) => t.length > 0);
    expect(tools.map((t) => t.name)).toEqual(['a', 'b', 'c', 'd']);
    expect(agent.got.map((m) => [m.method, m.id === undefined ? 'no id' : typeof m.id])).toEqual([
      ['initialize', 'number'],
      ['notifications/initialized', 'no id'],
      ['tools/list', 'number'],
      ['tools/list', 'number'],
      ['tools/list', 'number'],
    ]);
    expect(agent.got.filter((m) => m.method === 'tools/list').map((m) => m.params?.cursor)).toEqual(
      ['', 'c', 'd'],
    );
    expect(s.violations).toEqual([]);
    expect(s.initializeResult).toMatchObject({ serverInfo: { name: 'scripted' } });
  });

  it('asks for user tools when told to (a companion app)', async () => {
    const s = await startSim({ withUserTools: true });
    const agent = await dial(s.url, politeAgent([[tool('a')]]));
    await s.waitForTools((t) => t.length === 1);
    expect(agent.got.find((m) => m.method === 'tools/list')!.params).toEqual({
      cursor: '',
      withUserTools: true,
    });
  });
});

describe('EndpointSim: the rules it checks', () => {
  it('notes a reply whose id changed type, a reply without jsonrpc, and a page over 8000 bytes', async () => {
    const s = await startSim();
    await dial(s.url, (msg, send) => {
      if (msg.method === 'initialize')
        send({ jsonrpc: '2.0', id: String(msg.id), result: { capabilities: { tools: {} } } });
      if (msg.method === 'tools/list')
        send({ id: msg.id, result: { tools: [tool('big', 'x'.repeat(9000))] } });
    });
    await s.waitForTools((t) => t.length === 1);
    expect(s.violations).toEqual([
      'conn 1: reply id type differs: sent 1 (number), got "1" (string)',
      'conn 1: initialize result has no protocolVersion',
      expect.stringMatching(/^conn 1: a message without jsonrpc "2.0"/),
      expect.stringMatching(/^conn 1: a tools\/list page of 9\d{3} bytes \(limit 8000\)$/),
    ]);
  });

  it('notes a second reply to one request and a reply to an id never sent', async () => {
    const s = await startSim();
    await dial(s.url, (msg, send) => {
      politeAgent([[tool('a')]])(msg, send);
      if (msg.method === 'tools/list') {
        politeAgent([[tool('a')]])(msg, send);
        send({ jsonrpc: '2.0', id: 999, result: {} });
      }
    });
    await s.waitForTools((t) => t.length === 1);
    await until(() => s.violations.length === 2, 'two violations');
    expect(s.violations).toEqual([
      'conn 1: a second reply for id 2',
      'conn 1: a reply for id 999, which was never sent',
    ]);
  });

  it('notes a frame that is not JSON and a ping answered with something other than {}', async () => {
    const s = await startSim();
    await dial(
      s.url,
      politeAgent([[tool('a')]], (msg, send) => {
        if (msg.method === 'ping') send({ jsonrpc: '2.0', id: msg.id, result: { pong: 1 } });
      }),
    );
    await s.waitForTools((t) => t.length === 1);
    sockets[0]!.send('hello?');
    await s.ping();
    expect(s.violations).toEqual([
      'conn 1: sent a frame that is not JSON: hello?',
      'conn 1: ping result should be {}, got {"pong":1}',
    ]);
  });
});

describe('EndpointSim: calling tools like the AI would', () => {
  it('reads only content[0].text of a result, and reports isError', async () => {
    const s = await startSim();
    await dial(
      s.url,
      politeAgent([[tool('a')]], (msg, send) => {
        if (msg.method !== 'tools/call') return;
        send({
          jsonrpc: '2.0',
          id: msg.id,
          result: {
            content: [
              {
                type: 'text',
                text: `ran ${msg.params?.name} with ${JSON.stringify(msg.params?.arguments)}`,
              },
              { type: 'text', text: 'second part, ignored' },
            ],
            isError: msg.params?.arguments?.fail === true,
          },
        });
      }),
    );
    await s.waitForTools((t) => t.length === 1);
    const ok = await s.callTool('a', { q: 1 });
    expect(ok).toMatchObject({ text: 'ran a with {"q":1}', isError: false });
    expect((ok.raw as { result: { content: unknown[] } }).result.content).toHaveLength(2);
    expect(await s.callTool('a', { fail: true })).toMatchObject({ isError: true });
  });

  it('gives a JSON-RPC error back as an error with its message', async () => {
    const s = await startSim();
    await dial(
      s.url,
      politeAgent([[tool('a')]], (msg, send) => {
        if (msg.method === 'tools/call')
          send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'no such tool' } });
      }),
    );
    await s.waitForTools((t) => t.length === 1);
    expect(await s.callTool('zzz')).toMatchObject({ text: 'no such tool', isError: true });
  });

  it('gives up on a call with no reply after callTimeoutMs, saying which', async () => {
    const s = await startSim({ callTimeoutMs: 100 });
    await dial(s.url, politeAgent([[tool('a')]]));
    await s.waitForTools((t) => t.length === 1);
    await expect(s.callTool('a')).rejects.toThrow(
      /'tools\/call' \(id 3\) got no reply within 100 ms on connection 1/,
    );
    expect(s.pendingTimers).toBe(0);
  });

  it('renames dots to underscores when asked to (a server quirk) and maps them back on calls', async () => {
    const s = await startSim({ renameDots: true });
    const agent = await dial(
      s.url,
      politeAgent([[tool('self.light.on')]], (msg, send) => {
        if (msg.method === 'tools/call')
          send({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'on' }] } });
      }),
    );
    const tools = await s.waitForTools((t) => t.length === 1);
    expect(tools[0]).toMatchObject({ name: 'self_light_on', listedName: 'self.light.on' });
    await s.callTool('self_light_on');
    expect(agent.got.find((m) => m.method === 'tools/call')!.params?.name).toBe('self.light.on');
  });
});

describe('EndpointSim: a changed tool list', () => {
  it('lists again on notifications/tools/list_changed', async () => {
    const s = await startSim();
    let pages = [[tool('a'), tool('b')]];
    const agent = await dial(s.url, (m, send) => politeAgent(pages)(m, send));
    await s.waitForTools((t) => t.length === 2);
    pages = [[tool('a')]];
    agent.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }));
    await s.waitForTools((t) => t.length === 1);
    expect(s.listChangedCount).toBe(1);
  });

  it('ignores it with relistOnChange: false, as most real servers do', async () => {
    const s = await startSim({ relistOnChange: false });
    const agent = await dial(
      s.url,
      politeAgent([[tool('a')]], (msg, send) => {
        if (msg.method === 'ping') send({ jsonrpc: '2.0', id: msg.id, result: {} });
      }),
    );
    await s.waitForTools((t) => t.length === 1);
    const changed = nextEvent(s.events, 'listChanged');
    agent.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }));
    await changed;
    await s.ping(); // a round trip: anything the sim was going to send has been sent
    expect(agent.got.filter((m) => m.method === 'tools/list')).toHaveLength(1);
    expect(s.listChangedCount).toBe(1);
  });
});

describe('EndpointSim: connections', () => {
  it('drops every connection on demand and counts the next one', async () => {
    const s = await startSim();
    const first = await dial(s.url, politeAgent([[tool('a')]]));
    await s.waitForTools((t) => t.length === 1);
    const closed = new Promise<void>((r) => first.ws.once('close', () => r()));
    s.dropConnections();
    await closed;
    await until(() => s.openConnections === 0, 'the sim to see the close');
    await expect(s.ping()).rejects.toThrow(/no open connection/);
    await dial(s.url, politeAgent([[tool('b')]]));
    const tools = await s.waitForTools((t) => t[0]?.name === 'b');
    expect(tools).toHaveLength(1);
    expect(s.connections).toBe(2);
  });

  it('stops with no socket or timer left and fails whoever still waits', async () => {
    const s = await startSim();
    const agent = await dial(s.url, () => undefined); // never answers initialize
    await s.waitForConnection(1);
    expect(s.pendingTimers).toBe(1);
    const waiting = s.waitForTools(() => true);
    const closed = new Promise<void>((r) => agent.ws.once('close', () => r()));
    await s.stop();
    await expect(waiting).rejects.toThrow('EndpointSim stopped');
    await closed;
    expect(s.pendingTimers).toBe(0);
    expect(s.openConnections).toBe(0);
  });
});

describe('EndpointSim: the terminal log', () => {
  it('prints one line per connection, listing, call and close, and never the token', async () => {
    const s = await startSim({ token: 'tok-VERY-SECRET' });
    const lines: string[] = [];
    const off = logEndpointSim(s, (l) => lines.push(l));
    expect(await upgradeStatus(s.url.replace('tok-VERY-SECRET', 'x'))).toBe(401);
    const agent = await dial(
      s.url,
      politeAgent([[tool('get_time')]], (msg, send) => {
        if (msg.method === 'tools/call')
          send({
            jsonrpc: '2.0',
            id: msg.id,
            result: { content: [{ type: 'text', text: '12:00' }] },
          });
      }),
    );
    await s.waitForTools((t) => t.length === 1);
    await s.callTool('get_time', {});
    agent.ws.close();
    await until(() => lines.includes('[1] closed'), 'the close line');
    off();
    expect(lines).toEqual([
      'refused a connection: HTTP 401 Unauthorized',
      '[1] connected',
      '[1] tools: get_time',
      '[1] call get_time {}',
      '[1] result get_time: 12:00',
      '[1] closed',
    ]);
    expect(lines.join('\n')).not.toContain('tok-VERY-SECRET');
  });
});
