import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ConnectionState } from '../../../app/contract/connection.js';
import { seededIds } from '../../../app/ids.js';
import { type LinkOptions, ReconnectingLink } from '../../../app/wire/kit/link.js';
import {
  LinkConfigError,
  WsDialer,
  type WsMessage,
  type WsTiming,
  redactText,
  redactUrl,
} from '../../../app/wire/kit/ws-dialer.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { nextEvent, until } from '../../helpers/wait.js';

const TOKEN = 'tok-SECRET-7f3a';

interface TestServer {
  url: string;
  port: number;
  wss: WebSocketServer;
  /** Server-side sockets, newest last. */
  sockets: WebSocket[];
  /** Upgrade requests seen, accepted or refused. */
  attempts: number;
  close(): Promise<void>;
}

const servers: TestServer[] = [];
type WsLink = ReconnectingLink<WsMessage>;
const links: WsLink[] = [];

afterEach(async () => {
  await Promise.all(links.splice(0).map((l) => l.stop()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function startServer(
  opts: { refuse?: number; autoPong?: boolean; onConnection?: (ws: WebSocket) => void } = {},
): Promise<TestServer> {
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    autoPong: opts.autoPong ?? true,
    verifyClient: (_info, done) => {
      server.attempts += 1;
      if (opts.refuse) done(false, opts.refuse, 'No');
      else done(true);
    },
  });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const port = (wss.address() as AddressInfo).port;
  const server: TestServer = {
    url: `ws://127.0.0.1:${port}/mcp/?token=${TOKEN}`,
    port,
    wss,
    sockets: [],
    attempts: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close(() => resolve());
      }),
  };
  wss.on('connection', (ws) => {
    ws.on('error', () => undefined);
    server.sockets.push(ws);
    opts.onConnection?.(ws);
  });
  servers.push(server);
  return server;
}

/** A port nobody listens on (a server that is down). */
async function deadPort(): Promise<number> {
  const srv = createTcpServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

interface Watched {
  link: WsLink;
  states: ConnectionState[];
  clock: FakeClock;
}

function makeLink(
  url: string | (() => string | Promise<string>),
  timing: Partial<WsTiming> = {},
  extra: Partial<LinkOptions<WsMessage>> = {},
): Watched {
  const clock = new FakeClock(1_000_000);
  const link = new ReconnectingLink<WsMessage>({
    dialer: new WsDialer({ url: typeof url === 'string' ? () => url : url }),
    clock,
    ids: seededIds(7),
    timing: { jitter: 0, pingIntervalMs: 0, ...timing },
    ...extra,
  });
  const states: ConnectionState[] = [];
  link.events.on('state', (s) => states.push(s));
  links.push(link);
  return { link, states, clock };
}

const reached = (w: Watched, status: ConnectionState['status']) =>
  w.link.state.status === status
    ? Promise.resolve(w.link.state)
    : nextEvent(w.link.events, 'state', (s) => s.status === status);

describe('ReconnectingLink over WebSocket: connecting', () => {
  it('dials, becomes ready on open, and carries text both ways', async () => {
    const server = await startServer({
      onConnection: (ws) => ws.on('message', (d) => ws.send(`echo ${String(d)}`)),
    });
    const w = makeLink(server.url);
    const opened = nextEvent(w.link.events, 'open');
    w.link.start();
    await opened;
    await reached(w, 'ready');
    expect(w.states.map((s) => s.status)).toEqual(['connecting', 'ready']);
    expect(w.states[0]).toEqual({ status: 'connecting', attempt: 1 });
    const echoed = nextEvent(w.link.events, 'message');
    expect(w.link.send('hello')).toBe(true);
    expect((await echoed).data).toEqual({ kind: 'text', text: 'echo hello' });
  });

  it('with awaitReady waits in authenticating until the dialect says the greeting worked', async () => {
    const server = await startServer();
    const w = makeLink(server.url, {}, { awaitReady: true });
    w.link.start();
    await reached(w, 'authenticating');
    expect(w.link.isOpen).toBe(true);
    expect(w.link.isReady).toBe(false);
    w.link.markReady();
    expect(w.link.state.status).toBe('ready');
  });

  it('reads the URL again on every dial (a token changed in settings is used)', async () => {
    const server = await startServer();
    const seen: string[] = [];
    let n = 0;
    const w = makeLink(() => `${server.url}&n=${++n}`, { backoffInitialMs: 10 });
    server.wss.on('connection', (_ws, req) => seen.push(req.url ?? ''));
    w.link.start();
    await reached(w, 'ready');
    server.sockets[0]!.close();
    await reached(w, 'reconnecting');
    w.clock.advance(10);
    await until(() => seen.length === 2, 'the second dial');
    expect(seen[0]).toMatch(/n=1$/);
    expect(seen[1]).toMatch(/n=2$/);
  });
});

describe('ReconnectingLink over WebSocket: reconnecting', () => {
  it('reconnects with a growing delay that stops at the cap, and says why', async () => {
    const port = await deadPort();
    const w = makeLink(`ws://127.0.0.1:${port}/?token=${TOKEN}`, {
      backoffInitialMs: 100,
      backoffFactor: 2,
      backoffMaxMs: 1000,
    });
    w.link.start();
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      const s = await nextEvent(w.link.events, 'state', (x) => x.status === 'reconnecting');
      if (s.status !== 'reconnecting') throw new Error('unreachable');
      expect(s.attempt).toBe(i + 2);
      expect(s.lastError).toMatch(/not accepting connections/);
      delays.push(s.nextAt - w.clock.now());
      w.clock.advance(s.nextAt - w.clock.now());
    }
    expect(delays).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('spreads delays with jitter yet never waits past the cap', async () => {
    const port = await deadPort();
    const w = makeLink(`ws://127.0.0.1:${port}/`, {
      backoffInitialMs: 100,
      backoffMaxMs: 400,
      jitter: 0.5,
    });
    w.link.start();
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const s = await nextEvent(w.link.events, 'state', (x) => x.status === 'reconnecting');
      if (s.status !== 'reconnecting') throw new Error('unreachable');
      delays.push(s.nextAt - w.clock.now());
      w.clock.advance(s.nextAt - w.clock.now());
    }
    expect(Math.max(...delays)).toBeLessThanOrEqual(400);
    expect(delays[0]).toBeGreaterThanOrEqual(50);
    expect(delays[0]).toBeLessThanOrEqual(150);
    expect(new Set(delays).size).toBeGreaterThan(1);
  });

  it('starts the backoff over once a link has been healthy for a while', async () => {
    const server = await startServer();
    const w = makeLink(server.url, {
      backoffInitialMs: 100,
      backoffMaxMs: 10_000,
      healthyResetMs: 60_000,
    });
    w.link.start();
    const dropAndWait = async (): Promise<number> => {
      const next = nextEvent(w.link.events, 'state', (s) => s.status === 'reconnecting');
      server.sockets.at(-1)!.close();
      const s = await next;
      if (s.status !== 'reconnecting') throw new Error('unreachable');
      return s.nextAt - w.clock.now();
    };
    await reached(w, 'ready');
    const first = await dropAndWait();
    w.clock.advance(first);
    await reached(w, 'ready');
    const second = await dropAndWait();
    w.clock.advance(second);
    await reached(w, 'ready');
    expect([first, second]).toEqual([100, 200]);
    w.clock.advance(60_000); // healthy for a minute
    expect(await dropAndWait()).toBe(100);
  });

  it('fails an attempt whose greeting does not come in time, with a clear message', async () => {
    const server = await startServer();
    const w = makeLink(server.url, { handshakeTimeoutMs: 2500 }, { awaitReady: true });
    w.link.start();
    await reached(w, 'authenticating');
    const next = nextEvent(w.link.events, 'state', (s) => s.status === 'reconnecting');
    w.clock.advance(2500);
    const s = await next;
    expect(s.status === 'reconnecting' && s.lastError).toBe(
      'the server did not greet us within 2.5 s',
    );
    await until(() => server.sockets[0]!.readyState === server.sockets[0]!.CLOSED, 'socket closed');
  });

  it('treats a server that stops answering pings as gone and reconnects', async () => {
    const server = await startServer({ autoPong: false });
    let pings = 0;
    server.wss.on('connection', (ws) => ws.on('ping', () => (pings += 1)));
    const w = makeLink(server.url, { pingIntervalMs: 1000, pongTimeoutMs: 3000 });
    w.link.start();
    await reached(w, 'ready');
    const next = nextEvent(w.link.events, 'state', (s) => s.status === 'reconnecting');
    w.clock.advance(1000);
    await until(() => pings === 1, 'the server to see the first ping');
    // Pings every second, more often than the pong deadline: the deadline still holds.
    for (let t = 0; t < 3; t++) w.clock.advance(1000);
    const s = await next;
    expect(s.status === 'reconnecting' && s.lastError).toMatch(/stopped answering pings/);
  });

  it('keeps a link whose server answers pings', async () => {
    const server = await startServer();
    let pings = 0;
    server.wss.on('connection', (ws) => ws.on('ping', () => (pings += 1)));
    const w = makeLink(server.url, { pingIntervalMs: 1000, pongTimeoutMs: 500 });
    w.link.start();
    await reached(w, 'ready');
    const timersBetweenPings = w.clock.pendingTimers(); // the healthy timer and the next ping
    for (let i = 1; i <= 3; i++) {
      w.clock.advance(1000);
      await until(() => pings === i, `ping ${i}`);
      // The pong (real time) clears the deadline before the fake clock may pass it.
      await until(() => w.clock.pendingTimers() === timersBetweenPings, `pong ${i}`);
    }
    w.clock.advance(999);
    expect(w.link.state.status).toBe('ready');
    expect(w.states.filter((s) => s.status === 'reconnecting')).toEqual([]);
  });

  it('reconnect() drops the socket and dials again at once', async () => {
    const server = await startServer();
    const w = makeLink(server.url, { backoffInitialMs: 60_000 });
    w.link.start();
    await reached(w, 'ready');
    w.link.reconnect('the dialect wants a fresh start');
    expect(w.states.at(-2)).toMatchObject({
      status: 'reconnecting',
      lastError: 'the dialect wants a fresh start',
    });
    // No backoff: the next dial is already under way.
    expect(w.link.state.status).toBe('connecting');
    await until(() => server.sockets.length === 2 && w.link.isReady, 'the second link');
  });
});

describe('ReconnectingLink over WebSocket: giving up', () => {
  it.each([401, 403])('goes offline on HTTP %i without ever retrying', async (status) => {
    const server = await startServer({ refuse: status });
    const w = makeLink(server.url);
    w.link.start();
    const offline = await reached(w, 'offline');
    expect(offline).toMatchObject({ status: 'offline', reason: 'auth_failed' });
    expect(offline.status === 'offline' && offline.message).toMatch(
      new RegExp(`refused the connection \\(HTTP ${status}`),
    );
    // No reconnect timer is left: nothing will ever dial again.
    expect(w.clock.pendingTimers()).toBe(0);
    w.clock.advance(10 * 60_000);
    expect(server.attempts).toBe(1);
  });

  it('retries other refusals (HTTP 503) like any other failure', async () => {
    const server = await startServer({ refuse: 503 });
    const w = makeLink(server.url);
    w.link.start();
    const s = await reached(w, 'reconnecting');
    expect(s.status === 'reconnecting' && s.lastError).toMatch(/HTTP 503/);
  });

  it.each([
    ['not a URL', 'just some words', /cannot connect: Invalid URL/],
    [
      'an http address',
      `https://example.invalid/mcp/?token=${TOKEN}`,
      /not a ws:\/\/ or wss:\/\/ address/,
    ],
    ['a fragment', `ws://127.0.0.1:1/mcp/?token=${TOKEN}#x`, /fragment/],
  ])('stops with a configuration error for %s, without dialling', async (_what, url, message) => {
    const w = makeLink(url);
    w.link.start();
    const offline = await reached(w, 'offline');
    expect(offline).toMatchObject({ reason: 'config', message: expect.stringMatching(message) });
    expect(JSON.stringify(w.states)).not.toContain(TOKEN);
    expect(w.clock.pendingTimers()).toBe(0);
  });

  it('stops with the settings error when the URL cannot be made (no token saved)', async () => {
    const w = makeLink(() => {
      throw new LinkConfigError('no endpoint address is saved for this connection');
    });
    w.link.start();
    expect(await reached(w, 'offline')).toEqual({
      status: 'offline',
      reason: 'config',
      message: 'no endpoint address is saved for this connection',
    });
  });

  it('lets a dialect refuse the socket in its open handler: offline, never ready', async () => {
    const server = await startServer();
    const w = makeLink(server.url);
    w.link.events.on('open', () =>
      w.link.fail('this server speaks another protocol', { retry: false, reason: 'config' }),
    );
    w.link.start();
    const offline = await reached(w, 'offline');
    expect(offline).toMatchObject({ reason: 'config' });
    expect(w.states.some((s) => s.status === 'ready')).toBe(false);
    expect(w.link.state.status).toBe('offline');
  });
});

describe('ReconnectingLink over WebSocket: stop', () => {
  it('closes the socket, ends offline "stopped", and leaves no timer or redial behind', async () => {
    const server = await startServer();
    const w = makeLink(server.url, { pingIntervalMs: 1000 });
    w.link.start();
    await reached(w, 'ready');
    const closed = new Promise<number>((r) => server.sockets[0]!.once('close', (code) => r(code)));
    await w.link.stop();
    expect(await closed).toBe(1000);
    expect(w.link.state).toEqual({ status: 'offline', reason: 'stopped', message: 'disconnected' });
    expect(w.clock.pendingTimers()).toBe(0);
    w.clock.advance(10 * 60_000);
    expect(server.attempts).toBe(1);
    expect(w.link.send('late')).toBe(false);
  });

  it('stops cleanly while waiting to reconnect', async () => {
    const port = await deadPort();
    const w = makeLink(`ws://127.0.0.1:${port}/`);
    w.link.start();
    await reached(w, 'reconnecting');
    await w.link.stop();
    expect(w.link.state).toMatchObject({ status: 'offline', reason: 'stopped' });
    expect(w.clock.pendingTimers()).toBe(0);
  });

  it('stops cleanly in the middle of a dial', async () => {
    const server = await startServer();
    let release: (u: string) => void = () => undefined;
    const w = makeLink(() => new Promise<string>((r) => (release = r)));
    w.link.start();
    expect(w.link.state.status).toBe('connecting');
    await w.link.stop();
    release(server.url);
    await new Promise((r) => setTimeout(r, 50));
    expect(w.link.state.status).toBe('offline');
    expect(server.attempts).toBe(0);
  });
});

describe('redactUrl / redactText', () => {
  it.each([
    ['wss://api.xiaozhi.me/mcp/?token=abc.def.ghi', 'wss://api.xiaozhi.me/mcp/?token=***'],
    ['ws://h:8004/mcp_endpoint/mcp/?token=abc&x=1', 'ws://h:8004/mcp_endpoint/mcp/?token=***&x=1'],
    ['ws://h/?access_token=a&api_key=b&lang=zh', 'ws://h/?access_token=***&api_key=***&lang=zh'],
    ['ws://user:hunter2@h/', 'ws://user:***@h/'],
    ['ws://h/plain?lang=zh', 'ws://h/plain?lang=zh'],
  ])('hides the secret in %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });

  it('hides a token even in a URL it cannot parse', () => {
    expect(redactUrl('ws://[bad/?token=s3cret&a=1')).toBe('ws://[bad/?token=***&a=1');
  });

  it('hides tokens of every URL inside a message', () => {
    expect(redactText(`Invalid URL: ws://h:1/?token=${TOKEN} (and https://x/?key=k2)`)).toBe(
      'Invalid URL: ws://h:1/?token=*** (and https://x/?key=***)',
    );
  });

  it('no state of a failing link ever shows the token', async () => {
    const refused = await startServer({ refuse: 401 });
    const notFound = await startServer({ refuse: 404 });
    const port = await deadPort();
    const urls = [
      refused.url,
      notFound.url,
      `ws://127.0.0.1:${port}/?token=${TOKEN}`,
      `ftp://h/?token=${TOKEN}`,
    ];
    const all: ConnectionState[] = [];
    for (const url of urls) {
      const w = makeLink(url);
      w.link.start();
      await nextEvent(
        w.link.events,
        'state',
        (s) => s.status === 'offline' || s.status === 'reconnecting',
      );
      all.push(...w.states);
      await w.link.stop();
    }
    expect(all.length).toBeGreaterThan(4);
    expect(JSON.stringify(all)).not.toContain(TOKEN);
  });
});
