import { existsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_HTTP_CONNECTIONS, MAX_MESSAGE_BYTES } from '../../app/mcp-serve/limits.js';
import { HTTP_TOKEN_SECRET } from '../../app/mcp-serve/mcp-serve.js';
import { until } from '../helpers/wait.js';
import { type ServeRig, startServe, textOf } from './helpers.js';

let rig: ServeRig | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  await rig?.close();
  rig = undefined;
});

async function listening(r: ServeRig): Promise<{ url: string; port: number; token: string }> {
  await r.serve.applyHttp({ enabled: true, port: 0 });
  const state = r.serve.state();
  if (state.status !== 'listening') throw new Error(`not listening: ${JSON.stringify(state)}`);
  return { url: state.url, port: state.port, token: await r.serve.httpToken() };
}

async function httpClient(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'http-client', title: 'HTTP Client', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

/** A raw request, so every header is the test's own (Host above all). */
function raw(
  port: number,
  headers: Record<string, string>,
  body: unknown,
  host = '127.0.0.1',
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(
      {
        host,
        port,
        path: '/mcp',
        method: 'POST',
        headers: {
          host: `127.0.0.1:${port}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(data),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const initialize = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** The JSON-RPC message of a response that may come as one SSE event. */
function messageOf(text: string): { result?: { protocolVersion?: string } } {
  const data = text
    .split('\n')
    .find((l) => l.startsWith('data: '))
    ?.slice('data: '.length);
  return JSON.parse(data ?? text) as { result?: { protocolVersion?: string } };
}

describe('MCP over Streamable HTTP', () => {
  it('is off by default; on, it listens on 127.0.0.1 and keeps its token in the SecretStore', async () => {
    rig = await startServe();
    expect(rig.serve.state()).toEqual({ status: 'off' });
    const { url, token } = await listening(rig);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(await rig.secrets.get(HTTP_TOKEN_SECRET)).toBe(token);
    expect(token.length).toBeGreaterThanOrEqual(40);
  });

  it('answers initialize with each protocol version the SDK supports, each a session of its own', async () => {
    rig = await startServe();
    const { port, token } = await listening(rig);
    const sessions = new Set<string>();
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
      const res = await raw(port, { authorization: `Bearer ${token}` }, initialize(version));
      expect(res.status).toBe(200);
      expect(messageOf(res.text).result?.protocolVersion).toBe(version);
      sessions.add(String(res.headers['mcp-session-id']));
    }
    expect(sessions.size).toBe(SUPPORTED_PROTOCOL_VERSIONS.length);
  });

  it('lists, runs an allowed call, refuses a denied one, and tells of a changed list', async () => {
    rig = await startServe({
      overrides: { policies: { get_current_time: 'allow', list_apps: 'deny' } },
    });
    const { url, token } = await listening(rig);
    const client = await httpClient(url, token);
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'get_current_time')?.annotations).toMatchObject({
      readOnlyHint: true,
    });
    const ok = await client.callTool({ name: 'get_current_time', arguments: {} });
    expect(ok.isError).toBeFalsy();
    const denied = await client.callTool({ name: 'list_apps', arguments: {} });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toMatch(/blocked/);

    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    // The client's standalone SSE stream carries notifications: give it a moment to open.
    await new Promise((r) => setTimeout(r, 100));
    await rig.agent.setServiceEnabled('list_apps', false);
    await until(() => changed > 0, 'tools/list_changed over HTTP');

    const page = await rig.agent.queryAudit({ order: 'desc', limit: 1 });
    expect(page.records[0]).toMatchObject({
      connection: 'HTTP Client',
      connectionId: 'mcp:http-client',
      dialect: 'mcp',
    });
  });

  it('no token or a wrong one: 401', async () => {
    rig = await startServe();
    const { port, token } = await listening(rig);
    const none = await raw(port, {}, initialize('2025-06-18'));
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    const wrong = await raw(port, { authorization: `Bearer ${token}x` }, initialize('2025-06-18'));
    expect(wrong.status).toBe(401);
  });

  it(`holds at most ${MAX_HTTP_CONNECTIONS} connections: a local process cannot take every file handle`, async () => {
    rig = await startServe();
    const { port, token } = await listening(rig);
    const held: net.Socket[] = [];
    try {
      const open = () =>
        new Promise<net.Socket>((resolve, reject) => {
          const s = net.connect(port, '127.0.0.1', () => resolve(s));
          s.on('error', reject);
        });
      for (let i = 0; i < MAX_HTTP_CONNECTIONS; i++) held.push(await open());
      const extra = await open();
      held.push(extra);
      await new Promise<void>((resolve) => extra.once('close', () => resolve()));
      // Letting go of the idle ones makes room again: a real client is served.
      for (const s of held) s.destroy();
      let status = 0;
      for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
        status = await raw(port, { authorization: `Bearer ${token}` }, initialize('2025-06-18'))
          .then((r) => r.status)
          .catch(() => 0);
        if (status !== 200) await new Promise((r) => setTimeout(r, 20));
      }
      expect(status).toBe(200);
    } finally {
      for (const s of held) s.destroy();
    }
  });

  it('a foreign Origin: 403; a loopback one is served', async () => {
    rig = await startServe();
    const { port, token } = await listening(rig);
    const auth = { authorization: `Bearer ${token}` };
    const foreign = await raw(
      port,
      { ...auth, origin: 'https://evil.example' },
      initialize('2025-06-18'),
    );
    expect(foreign.status).toBe(403);
    const local = await raw(
      port,
      { ...auth, origin: 'http://localhost:3000' },
      initialize('2025-06-18'),
    );
    expect(local.status).toBe(200);
  });

  it('a Host that is not 127.0.0.1 or localhost with the port (DNS rebinding): 403', async () => {
    rig = await startServe();
    const { port, token } = await listening(rig);
    const auth = { authorization: `Bearer ${token}` };
    for (const host of [`evil.example:${port}`, '127.0.0.1', `127.0.0.1:${port + 1}`]) {
      const res = await raw(port, { ...auth, host }, initialize('2025-06-18'));
      expect(res.status, host).toBe(403);
    }
    expect(
      (await raw(port, { ...auth, host: `localhost:${port}` }, initialize('2025-06-18'))).status,
    ).toBe(200);
  });

  it('is not reachable on any non-loopback address of this machine', async () => {
    rig = await startServe();
    const { port } = await listening(rig);
    const addresses = Object.values(os.networkInterfaces())
      .flat()
      .filter((a): a is os.NetworkInterfaceInfo => !!a && !a.internal)
      .map((a) => a.address);
    for (const address of addresses) {
      const reached = await new Promise<boolean>((resolve) => {
        const s = net.connect({ host: address, port });
        s.once('connect', () => {
          s.destroy();
          resolve(true);
        });
        s.once('error', () => resolve(false));
      });
      expect(reached, address).toBe(false);
    }
    // Whatever interfaces exist, the socket is bound to loopback alone.
    const probe = net.connect({ host: '127.0.0.1', port });
    await new Promise((r) => probe.once('connect', r));
    expect(probe.remoteAddress).toBe('127.0.0.1');
    probe.destroy();
  });

  it('a new token ends the sessions of the old one, which is refused from then on', async () => {
    rig = await startServe();
    const { url, port, token } = await listening(rig);
    const client = await httpClient(url, token);
    await client.listTools();
    const fresh = await rig.serve.resetHttpToken();
    expect(fresh).not.toBe(token);
    expect(
      (await raw(port, { authorization: `Bearer ${token}` }, initialize('2025-06-18'))).status,
    ).toBe(401);
    expect(
      (await raw(port, { authorization: `Bearer ${fresh}` }, initialize('2025-06-18'))).status,
    ).toBe(200);
  });

  it("asks a client that declared elicitation on the call's own stream, even with no GET stream open", async () => {
    rig = await startServe();
    const { port, token } = await listening(rig);
    const base = {
      host: `127.0.0.1:${port}`,
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const post = (body: unknown, session?: string) =>
      fetch(`http://127.0.0.1:${port}/mcp`, {
        method: 'POST',
        headers: { ...base, ...(session && { 'mcp-session-id': session }) },
        body: JSON.stringify(body),
      });
    /** The JSON-RPC messages of an SSE answer, as they arrive. */
    async function* events(res: Response): AsyncGenerator<Record<string, unknown>> {
      const decoder = new TextDecoder();
      let buffered = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const event = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = event
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('');
          if (data) yield JSON.parse(data) as Record<string, unknown>;
        }
      }
    }

    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: { elicitation: {} },
        clientInfo: { name: 'raw-client', title: 'Raw Client', version: '1' },
      },
    });
    expect(init.status).toBe(200);
    const session = init.headers.get('mcp-session-id') as string;
    expect(session).toBeTruthy();
    await init.text();
    expect(
      (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status,
    ).toBe(202);

    // The call needs permission; nobody has the app open; the client never opened a GET stream.
    const call = await post(
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'create_file', arguments: { filename: 'asked.txt', content: 'x' } },
      },
      session,
    );
    expect(call.headers.get('content-type')).toMatch(/text\/event-stream/);
    const stream = events(call);
    const question = (await stream.next()).value as {
      id: number;
      method: string;
      params: { message: string };
    };
    expect(question.method).toBe('elicitation/create');
    expect(question.params.message).toContain('create_file');
    const answered = await post(
      {
        jsonrpc: '2.0',
        id: question.id,
        result: { action: 'accept', content: { answer: 'once' } },
      },
      session,
    );
    expect(answered.status).toBe(202);
    let result: { id?: number; method?: string; result?: { isError?: boolean } } | undefined;
    for await (const message of stream) {
      result = message;
      if (message.id === 2) break;
    }
    expect(result?.id).toBe(2);
    expect(result?.result?.isError).toBeFalsy();
    expect(existsSync(path.join(rig.dir, 'files', 'asked.txt'))).toBe(true);
  });

  it('a port in use is a failed state saying so, and switching off stops it', async () => {
    rig = await startServe();
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      await rig.serve.applyHttp({ enabled: true, port });
      expect(rig.serve.state()).toMatchObject({ status: 'failed', port, reason: 'port_in_use' });
    } finally {
      blocker.close();
    }
    await rig.serve.applyHttp({ enabled: false, port });
    expect(rig.serve.state()).toEqual({ status: 'off' });
  });

  it('a port another program took withdraws the token its apps may have sent it: not let in on the next port', async () => {
    rig = await startServe();
    const { port, token } = await listening(rig);
    await rig.serve.applyHttp({ enabled: false, port });
    // Another user's program takes the port while the agent is away, and is handed the token.
    const squatter = net.createServer((s) => s.destroy());
    await new Promise<void>((r) => squatter.listen(port, '127.0.0.1', () => r()));
    try {
      await rig.serve.applyHttp({ enabled: true, port });
      const failed = rig.serve.state();
      expect(failed).toMatchObject({ status: 'failed', port, reason: 'port_in_use' });
      expect(failed.status === 'failed' && failed.message).toMatch(
        /in use by another program.*token was withdrawn.*make a new one/,
      );
    } finally {
      squatter.close();
    }
    expect(await rig.secrets.get(HTTP_TOKEN_SECRET)).toBeUndefined();
    expect(await rig.serve.hasHttpToken()).toBe(false);

    // On the port the user moves to, the old token is refused; a new one made for the apps works.
    await rig.serve.applyHttp({ enabled: true, port: 0 });
    const moved = rig.serve.state();
    expect(moved).toMatchObject({ status: 'listening', hasToken: false });
    const movedPort = (moved as { port: number }).port;
    const auth = (t: string) => ({ authorization: `Bearer ${t}` });
    expect((await raw(movedPort, auth(token), initialize('2025-06-18'))).status).toBe(401);
    const fresh = await rig.serve.resetHttpToken();
    expect(fresh).not.toBe(token);
    expect((await raw(movedPort, auth(fresh), initialize('2025-06-18'))).status).toBe(200);
  });

  it('its own restart on the same port, or a port in use with no token made, withdraws nothing', async () => {
    rig = await startServe();
    const { port, token } = await listening(rig);
    await rig.serve.applyHttp({ enabled: false, port });
    await rig.serve.applyHttp({ enabled: true, port });
    expect(rig.serve.state()).toMatchObject({ status: 'listening', port, hasToken: true });
    expect(await rig.serve.httpToken()).toBe(token);
    expect(
      (await raw(port, { authorization: `Bearer ${token}` }, initialize('2025-06-18'))).status,
    ).toBe(200);

    const fresh = await startServe();
    try {
      // `port` is this agent's: for the other agent it is in use, and it has no token to withdraw.
      await fresh.serve.applyHttp({ enabled: true, port });
      const failed = fresh.serve.state();
      expect(failed).toMatchObject({ status: 'failed', reason: 'port_in_use' });
      expect(failed.status === 'failed' && failed.message).not.toMatch(/withdrawn/);
      expect(await fresh.serve.hasHttpToken()).toBe(false);
    } finally {
      await fresh.close();
    }
  });
});

describe('MCP over Streamable HTTP: nobody holds a connection without the token', () => {
  /**
   * A raw connection that sends `head`, then (given `more`) a little more every 100 ms, so no idle
   * timeout (Node's keep-alive one is 5 s) ever ends it; what came back and whether it closed.
   */
  function hold(port: number, head: string, more?: string) {
    const s = net.connect(port, '127.0.0.1');
    const seen = { text: '', closed: false, socket: s };
    const drip = more ? setInterval(() => s.write(more), 100) : undefined;
    s.on('error', () => undefined);
    s.on('data', (d: Buffer) => (seen.text += d.toString()));
    s.on('close', () => {
      seen.closed = true;
      clearInterval(drip);
    });
    s.write(head);
    return seen;
  }
  const chunk = '1\r\nx\r\n';
  const chunkedPost = (port: number, headers: string, path = '/mcp') =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headers}Transfer-Encoding: chunked\r\n\r\n1\r\nx\r\n`;

  it('every refusal is answered with Connection: close and the connection ends, though its body never does', async () => {
    rig = await startServe();
    const { port, token } = await listening(rig);
    const auth = `Authorization: Bearer ${token}\r\n`;
    const refusals = {
      401: hold(port, chunkedPost(port, 'Authorization: Bearer wrong\r\n'), chunk),
      403: hold(port, chunkedPost(port, `${auth}Origin: https://evil.example\r\n`), chunk),
      404: hold(port, chunkedPost(port, auth, '/other'), chunk),
      413: hold(
        port,
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${auth}Content-Length: ${MAX_MESSAGE_BYTES + 1}\r\n\r\n{`,
        'x',
      ),
      // A GET refused, then the next request's headers coming a line at a time.
      400: hold(
        port,
        `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${auth}\r\nGET /mcp HTTP/1.1\r\n`,
        'X-Pad: 1\r\n',
      ),
    };
    try {
      for (const [status, seen] of Object.entries(refusals)) {
        await until(() => seen.closed, `the ${status} connection closed`);
        expect(seen.text, status).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
        expect(seen.text.toLowerCase(), status).toContain('connection: close');
      }
    } finally {
      for (const seen of Object.values(refusals)) seen.socket.destroy();
    }
  });

  it(`${MAX_HTTP_CONNECTIONS} refused requests whose bodies never end do not keep out the client with the token`, async () => {
    rig = await startServe();
    const { port, token } = await listening(rig);
    const held = Array.from({ length: MAX_HTTP_CONNECTIONS }, () =>
      hold(port, chunkedPost(port, 'Authorization: Bearer wrong\r\n'), chunk),
    );
    try {
      await until(() => held.every((s) => s.closed), 'every refused connection closed', 10_000);
      const res = await raw(port, { authorization: `Bearer ${token}` }, initialize('2025-06-18'));
      expect(res.status).toBe(200);
    } finally {
      for (const s of held) s.socket.destroy();
    }
  });

  it('a request that does not arrive whole in time is closed, token or not; an open GET stream is not', async () => {
    const timeouts = { headersMs: 200, requestMs: 400, checkEveryMs: 50 };
    rig = await startServe({}, { httpTimeouts: timeouts });
    const { port, token } = await listening(rig);
    const auth = { authorization: `Bearer ${token}` };
    // The client's session and its GET stream, opened before the slow senders.
    const init = await raw(port, auth, initialize('2025-06-18'));
    const session = String(init.headers['mcp-session-id']);
    const base = {
      ...auth,
      'mcp-session-id': session,
      'mcp-protocol-version': '2025-06-18',
    };
    await raw(port, base, { jsonrpc: '2.0', method: 'notifications/initialized' });
    const stream = await fetch(`http://127.0.0.1:${port}/mcp`, {
      headers: { ...base, accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();

    const silent = hold(port, '');
    const slowHeaders = hold(port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    const slowBody = hold(port, chunkedPost(port, `Authorization: Bearer ${token}\r\n`), chunk);
    try {
      await until(() => silent.closed && slowHeaders.closed && slowBody.closed, 'slow senders cut');
      expect(slowBody.text).toMatch(/^HTTP\/1.1 408 /);
    } finally {
      for (const s of [silent, slowHeaders, slowBody]) s.socket.destroy();
    }
    // Well past both bounds, the stream still carries what the agent tells the client.
    await new Promise((r) => setTimeout(r, timeouts.requestMs * 2));
    await rig.agent.setServiceEnabled('list_apps', false);
    let text = '';
    while (!text.includes('notifications/tools/list_changed')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain('notifications/tools/list_changed');
    await reader.cancel();
  });
});

describe('MCP over Streamable HTTP: a cancelled call', () => {
  it('ends its request: cancels at the permission prompt do not pile up open connections', async () => {
    rig = await startServe();
    rig.agent.broker.attach({ name: 'window' }); // a window is open: the question waits
    const { url, token } = await listening(rig);
    // The client's fetch, watched: a POST is done once its answer's headers have come.
    const open = new Set<number>();
    let n = 0;
    const watched: typeof fetch = async (input, init) => {
      const k = ++n;
      open.add(k);
      try {
        return await fetch(input, init);
      } finally {
        open.delete(k);
      }
    };
    const client = new Client({ name: 'canceller', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        fetch: watched,
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    for (let i = 0; i < 5; i++) {
      const stop = new AbortController();
      const call = client
        .callTool(
          { name: 'create_file', arguments: { filename: `c${i}.txt`, content: 'x' } },
          undefined,
          {
            signal: stop.signal,
          },
        )
        .catch((err: Error) => err.message);
      await until(() => rig!.agent.broker.pending().length === 1, 'the question');
      stop.abort('the user pressed stop');
      expect(await call).toMatch(/stop/);
      await until(() => rig!.agent.broker.pending().length === 0, 'the question withdrawn');
    }
    await until(() => open.size === 0, 'every request answered');
    expect(existsSync(path.join(rig.dir, 'files', 'c0.txt'))).toBe(false);
    // The session still answers.
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });
});
