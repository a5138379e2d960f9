import { type AddressInfo, type Socket, createServer as createTcpServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ConnectionState } from '../../../app/contract/connection.js';
import { seededIds } from '../../../app/ids.js';
import { toDisposable } from '../../../app/lifecycle.js';
import {
  Channel,
  type LinkOptions,
  type LinkTiming,
  ReconnectingLink,
} from '../../../app/wire/kit/link.js';
import { TcpDialer } from '../../../app/wire/kit/tcp-dialer.js';
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
const links: Array<{ stop(): Promise<void> }> = [];

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

// --- the same machine over TCP, and what both dialers share ----------------------------------

interface TcpTestServer {
  port: number;
  /** Server-side sockets, newest last. */
  sockets: Socket[];
  /** What each socket received, by socket index. */
  received: Buffer[][];
  close(): Promise<void>;
}

async function startTcpServer(onConnection?: (socket: Socket) => void): Promise<TcpTestServer> {
  const srv = createTcpServer((socket) => {
    socket.on('error', () => undefined);
    const index = server.sockets.push(socket) - 1;
    server.received[index] = [];
    socket.on('data', (d) => server.received[index]!.push(d));
    onConnection?.(socket);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const server: TcpTestServer = {
    port: (srv.address() as AddressInfo).port,
    sockets: [],
    received: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of server.sockets) socket.destroy();
        srv.close(() => resolve());
      }),
  };
  servers.push(server as unknown as TestServer);
  return server;
}

/** Counts what the link holds the process with (the real hold is a referenced timer). */
function holdCounter() {
  const holds = { active: 0, taken: 0 };
  const holdProcess = () => {
    holds.active += 1;
    holds.taken += 1;
    return toDisposable(() => (holds.active -= 1));
  };
  return { holds, holdProcess };
}

function makeTcpLink(
  port: number,
  timing: Partial<LinkTiming> = {},
  extra: Partial<LinkOptions<Buffer>> = {},
) {
  const clock = new FakeClock(1_000_000);
  const { holds, holdProcess } = holdCounter();
  const link = new ReconnectingLink<Buffer>({
    dialer: new TcpDialer(() => ({ host: '127.0.0.1', port })),
    clock,
    ids: seededIds(7),
    timing: { jitter: 0, pingIntervalMs: 0, backoffInitialMs: 100, ...timing },
    holdProcess,
    ...extra,
  });
  const states: ConnectionState[] = [];
  link.events.on('state', (st) => states.push(st));
  links.push(link);
  const reachedTcp = (status: ConnectionState['status']) =>
    link.state.status === status
      ? Promise.resolve(link.state)
      : nextEvent(link.events, 'state', (st) => st.status === status);
  return { link, states, clock, holds, reached: reachedTcp };
}

const text = (chunks: Buffer[] | undefined) => Buffer.concat(chunks ?? []).toString('utf8');

describe('ReconnectingLink over TCP', () => {
  it('dials, is ready on open, and hands over what arrives with the channel it came on', async () => {
    const server = await startTcpServer((socket) =>
      socket.on('data', (d) => socket.write(`echo:${d.toString('utf8')}`)),
    );
    const t = makeTcpLink(server.port);
    t.link.start();
    await t.reached('ready');
    expect(t.states.map((st) => st.status)).toEqual(['connecting', 'ready']);
    const got = nextEvent(t.link.events, 'message');
    expect(t.link.send('hello')).toBe(true);
    const { channel, data } = await got;
    expect(data.toString('utf8')).toBe('echo:hello');
    expect(channel).toBe(t.link.openChannel);
    expect(channel.id).toBe(1);
  });

  it('dials again after a drop with a growing backoff, holding the process while it waits', async () => {
    const server = await startTcpServer();
    const t = makeTcpLink(server.port, { backoffInitialMs: 100, backoffFactor: 2 });
    t.link.start();
    await t.reached('ready');
    const waits: number[] = [];
    for (let i = 0; i < 2; i++) {
      const next = nextEvent(t.link.events, 'state', (st) => st.status === 'reconnecting');
      server.sockets.at(-1)!.destroy();
      const st = await next;
      if (st.status !== 'reconnecting') throw new Error('unreachable');
      expect(st.lastError).toMatch(/closed by the server|reset/);
      waits.push(st.nextAt - t.clock.now());
      // Between two sockets nothing else keeps Node running: the link does.
      expect(t.holds.active).toBe(1);
      t.clock.advance(st.nextAt - t.clock.now());
      await t.reached('ready');
    }
    expect(waits).toEqual([100, 200]);
    expect(server.sockets).toHaveLength(3);
  });

  it('goes offline for good on a close the dialect reads as a refusal, and lets the process go', async () => {
    const server = await startTcpServer((socket) => socket.end());
    const t = makeTcpLink(
      server.port,
      {},
      {
        closed: () => ({ reason: 'auth_failed', message: 'the server hung up on our login' }),
      },
    );
    t.link.start();
    const offline = await t.reached('offline');
    expect(offline).toEqual({
      status: 'offline',
      reason: 'auth_failed',
      message: 'the server hung up on our login',
    });
    t.clock.advance(10 * 60_000);
    expect(server.sockets).toHaveLength(1);
    expect(t.clock.pendingTimers()).toBe(0);
    expect(t.holds.active).toBe(0);
  });

  it('pings after a quiet spell when idle-driven; any byte answers, silence drops the link', async () => {
    let answer = true;
    const server = await startTcpServer((socket) =>
      socket.on('data', (d) => {
        if (answer && d.toString('utf8').includes('PING')) socket.write('PONG');
      }),
    );
    const t = makeTcpLink(
      server.port,
      { pingIntervalMs: 1000, pongTimeoutMs: 500 },
      { heartbeat: 'idle', ping: (channel) => channel.send('PING') },
    );
    t.link.start();
    await t.reached('ready');
    // Sending resets the idle wait: no ping yet after 1.5 s with a send in the middle.
    t.clock.advance(800);
    t.link.send('work');
    t.clock.advance(700);
    await until(() => text(server.received[0]).length > 0, 'the work to arrive');
    await new Promise((r) => setTimeout(r, 20));
    expect(text(server.received[0])).toBe('work');
    t.clock.advance(300);
    await until(() => text(server.received[0]).endsWith('PING'), 'the ping');
    await until(() => t.clock.pendingTimers() === 2, 'the pong to clear the deadline');
    answer = false;
    t.clock.advance(1000);
    await until(() => text(server.received[0]).endsWith('PINGPING'), 'the second ping');
    const next = nextEvent(t.link.events, 'state', (st) => st.status === 'reconnecting');
    t.clock.advance(500);
    const st = await next;
    expect(st.status === 'reconnecting' && st.lastError).toMatch(/stopped answering pings/);
  });

  it('stop closes the socket and leaves no timer, socket or hold behind', async () => {
    const server = await startTcpServer();
    const t = makeTcpLink(server.port, { pingIntervalMs: 1000 });
    t.link.start();
    await t.reached('ready');
    const ended = new Promise<void>((r) => server.sockets[0]!.once('end', () => r()));
    await t.link.stop();
    await ended;
    expect(t.link.state).toEqual({ status: 'offline', reason: 'stopped', message: 'disconnected' });
    expect(t.clock.pendingTimers()).toBe(0);
    expect(t.link.liveSockets).toBe(0);
    expect(t.holds.active).toBe(0);
    expect(t.link.send('late')).toBe(false);
    t.clock.advance(10 * 60_000);
    expect(server.sockets).toHaveLength(1);
  });

  it('says goodbye before closing only on a socket that has spoken, within closeWaitMs', async () => {
    const server = await startTcpServer((socket) =>
      socket.on('data', (d) => {
        if (d.toString('utf8').includes('BYE')) socket.end('OK-BYE');
      }),
    );
    let saidBye = 0;
    const goodbye = (channel: Channel) => {
      saidBye += 1;
      channel.send('BYE');
      return new Promise<void>((resolve) => {
        t.link.events.on('message', ({ data }) => {
          if (data.toString('utf8') === 'OK-BYE') resolve();
        });
      });
    };
    const t = makeTcpLink(server.port, {}, { goodbye });
    t.link.start();
    await t.reached('ready');
    t.link.send('hello');
    await t.link.stop();
    expect(saidBye).toBe(1);
    await until(() => text(server.received[0]) === 'helloBYE', 'the goodbye');
    // A link that never spoke stops without one.
    const quiet = makeTcpLink(server.port, {}, { goodbye });
    quiet.link.start();
    await quiet.reached('ready');
    await quiet.link.stop();
    expect(saidBye).toBe(1);
  });
});

describe('ReconnectingLink: the reply channel', () => {
  it.each(['tcp', 'ws'] as const)(
    'over %s, an answer computed for an old socket is never sent on the new one',
    async (kind) => {
      let link: ReconnectingLink<unknown>;
      let dropFirst: () => void;
      let receivedOnSecond: () => string;
      let clock: FakeClock;
      if (kind === 'tcp') {
        const server = await startTcpServer((socket) => socket.write('call-1'));
        const t = makeTcpLink(server.port);
        link = t.link as ReconnectingLink<unknown>;
        clock = t.clock;
        dropFirst = () => server.sockets[0]!.destroy();
        receivedOnSecond = () => text(server.received[1]);
      } else {
        const seen: string[] = [];
        const server = await startServer({
          onConnection: (ws) => {
            if (server.sockets.length === 2) ws.on('message', (d) => seen.push(String(d)));
            ws.send('call-1');
          },
        });
        const w = makeLink(server.url, { backoffInitialMs: 100 });
        link = w.link as ReconnectingLink<unknown>;
        clock = w.clock;
        dropFirst = () => server.sockets[0]!.terminate();
        receivedOnSecond = () => seen.join('');
      }
      const first = nextEvent(link.events, 'message');
      link.start();
      const { channel: old } = await first;
      expect(old.open).toBe(true);
      const reconnecting = nextEvent(link.events, 'state', (st) => st.status === 'reconnecting');
      dropFirst();
      await reconnecting;
      clock.advance(100);
      await until(() => link.isReady, 'the second socket');
      // The call came on the first socket; its answer is ready only now.
      expect(old.open).toBe(false);
      expect(old.send('answer-1')).toBe(false);
      const fresh = link.openChannel!;
      expect(fresh).not.toBe(old);
      expect(fresh.send('hello-2')).toBe(true);
      await until(() => receivedOnSecond().includes('hello-2'), 'the second socket to hear us');
      expect(receivedOnSecond()).not.toContain('answer-1');
    },
  );
});

describe('ReconnectingLink: deliberate reconnects', () => {
  it('close the old socket with a close frame and do not grow the backoff of a real outage', async () => {
    const codes: number[] = [];
    const server = await startServer({
      onConnection: (ws) => ws.on('close', (code) => codes.push(code)),
    });
    const w = makeLink(server.url, { backoffInitialMs: 1000, backoffMaxMs: 60_000 });
    w.link.start();
    await reached(w, 'ready');
    for (let i = 2; i <= 3; i++) {
      expect(w.link.reconnect('the services changed')).toBe(true);
      await until(() => server.sockets.length === i && w.link.isReady, `socket ${i}`);
    }
    await until(() => codes.length === 2, 'the replaced sockets to close');
    expect(codes).toEqual([1000, 1000]);
    const next = nextEvent(w.link.events, 'state', (st) => st.status === 'reconnecting');
    server.sockets.at(-1)!.terminate();
    const st = await next;
    expect(st).toMatchObject({ status: 'reconnecting', attempt: 2 });
    expect(st.status === 'reconnecting' && st.nextAt - w.clock.now()).toBe(1000);
  });

  it('does nothing without an open socket', async () => {
    const port = await deadPort();
    const w = makeLink(`ws://127.0.0.1:${port}/`);
    expect(w.link.reconnect('not started')).toBe(false);
    w.link.start();
    await reached(w, 'reconnecting');
    expect(w.link.reconnect('not open')).toBe(false);
  });
});

describe('ReconnectingLink: backpressure', () => {
  it.each(['tcp', 'ws'] as const)(
    'over %s, stops reading from a server that does not read, resumes when it does, drops it past the limit',
    async (kind) => {
      const limits = { writeHighWaterBytes: 256 * 1024, writeMaxBufferedBytes: 64 * 1024 * 1024 };
      let link: ReconnectingLink<unknown>;
      let serverSocket: () => Socket;
      let serverSend: (t: string) => void;
      if (kind === 'tcp') {
        const server = await startTcpServer((socket) => socket.pause());
        const t = makeTcpLink(server.port, {}, limits);
        link = t.link as ReconnectingLink<unknown>;
        serverSocket = () => server.sockets[0]!;
        serverSend = (m) => server.sockets[0]!.write(m);
      } else {
        let raw: Socket | undefined;
        const server = await startServer();
        server.wss.on('connection', (_ws, req) => {
          raw = req.socket as Socket;
          raw.pause();
        });
        const w = makeLink(server.url, {}, limits);
        link = w.link as ReconnectingLink<unknown>;
        serverSocket = () => raw!;
        serverSend = (m) => server.sockets[0]!.send(m);
      }
      const issues: string[] = [];
      link.events.on('issue', ({ message }) => issues.push(message));
      const messages: number[] = [];
      link.events.on('message', () => messages.push(Date.now()));
      link.start();
      await until(() => link.isReady, 'ready');
      const channel = link.openChannel!;
      const chunk = Buffer.alloc(256 * 1024, 0x61);
      for (let i = 0; i < 400 && !channel.paused; i++) {
        channel.send(chunk);
        await new Promise((r) => setImmediate(r));
      }
      expect(channel.paused).toBe(true);
      expect(issues.join('\n')).toMatch(/the server is not reading .* taking no new messages/);
      // While paused, what the server sends is not read.
      serverSend('a new call');
      await new Promise((r) => setTimeout(r, 100));
      expect(messages).toHaveLength(0);
      // The server reads again: the link drains, resumes and gets the call.
      serverSocket().resume();
      await until(() => !channel.paused, 'the link to resume');
      await until(() => messages.length > 0, 'the call held back');
      expect(issues.join('\n')).toMatch(/reads again/);
      // A server that never reads at all is dropped once the limit is passed.
      serverSocket().pause();
      const dropped = nextEvent(link.events, 'state', (st) => st.status === 'reconnecting', 20_000);
      for (let i = 0; i < 2000 && link.openChannel === channel; i++) {
        channel.send(chunk);
        if (i % 16 === 0) await new Promise((r) => setImmediate(r));
      }
      const st = await dropped;
      expect(st.status === 'reconnecting' && st.lastError).toMatch(
        /does not read what it asked for \(\d+ bytes waiting to be sent\)/,
      );
      expect(channel.open).toBe(false);
    },
  );
});

describe('ReconnectingLink: calls in flight', () => {
  it('stops reading while maxCallsInFlight calls run, and reads on once half have ended', async () => {
    const server = await startTcpServer();
    const t = makeTcpLink(server.port, {}, { maxCallsInFlight: 2 });
    const got: string[] = [];
    const finish: Array<() => void> = [];
    t.link.events.on('message', ({ channel, data }) => {
      got.push(data.toString('utf8'));
      void channel.track(() => new Promise<void>((resolve) => finish.push(resolve)));
    });
    t.link.start();
    await t.reached('ready');
    for (const [i, call] of ['call-1', 'call-2'].entries()) {
      server.sockets[0]!.write(call);
      await until(() => got.length === i + 1, call);
    }
    const channel = t.link.openChannel!;
    expect(channel.pausedBy('calls')).toBe(true);
    server.sockets[0]!.write('call-3');
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toEqual(['call-1', 'call-2']);
    finish[0]!();
    await until(() => got.length === 3, 'the third call');
    expect(got[2]).toBe('call-3');
    expect(channel.inFlight).toBe(2);
  });
});

describe('Channel.track', () => {
  it('runs at most maxCallsInFlight calls at once; the others wait their turn, in order', async () => {
    const channel = new Channel(1, () => undefined, 2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const ends: Array<() => void> = [];
    const calls = [1, 2, 3, 4, 5].map((n) =>
      channel.track(async () => {
        running += 1;
        most = Math.max(most, running);
        order.push(n);
        await new Promise<void>((resolve) => ends.push(resolve));
        running -= 1;
        return n;
      }),
    );
    await until(() => ends.length === 2, 'two running');
    expect(channel.waiting).toBe(3);
    expect(channel.pausedBy('calls')).toBe(true);
    while (ends.length) {
      ends.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    expect(await Promise.all(calls)).toEqual([1, 2, 3, 4, 5]);
    expect(order).toEqual([1, 2, 3, 4, 5]);
    expect(most).toBe(2);
    expect(channel.inFlight).toBe(0);
    expect(channel.paused).toBe(false);
  });
});
