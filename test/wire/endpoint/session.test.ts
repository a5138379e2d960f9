import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Agent } from '../../../app/agent.js';
import type { ConnectionState, RegistrationState } from '../../../app/contract/connection.js';
import type { Policy } from '../../../app/contract/policy.js';
import type { Service } from '../../../app/services/service.js';
import { EndpointSim, type EndpointSimOptions } from '../../../sim/endpoint/server.js';
import { EndpointSession, MAX_FRAME_BYTES } from '../../../app/wire/endpoint/session.js';
import type { WsTiming } from '../../../app/wire/kit/ws-dialer.js';
import { nextEvent, until } from '../../helpers/wait.js';
import { rebootService } from '../../helpers/services.js';
import { FAST_WS, type TempAgent, openTempAgent, recordEvents } from '../../helpers/ws-agent.js';
import { BUILTIN_NAMES, builtinsWithout } from '../../helpers/builtins.js';

const FAST: Partial<WsTiming> = { ...FAST_WS, backoffMaxMs: 100 };

/** A service that takes its time, so a call can still be running when the link drops. */
function slowService(ms: number): Service {
  return {
    name: 'slow_lookup',
    title: 'Slow lookup',
    description: 'Looks something up slowly.',
    parameters: { type: 'object', properties: {} },
    risk: 'read',
    timeoutMs: 10_000,
    run: () => new Promise((resolve) => setTimeout(() => resolve('looked up'), ms)),
  };
}

/** Many services with long descriptions: the listing takes several pages. */
const manyServices: Service[] = Array.from({ length: 60 }, (_, i) => ({
  name: `lookup_${String(i).padStart(2, '0')}`,
  title: `Lookup ${i}`,
  description:
    `Lookup number ${i}: ` + 'finds facts about the weather, time and places. '.repeat(8),
  parameters: { type: 'object', properties: { q: { type: 'string' } } },
  risk: 'read',
  timeoutMs: 1000,
  run: async () => `lookup ${i}`,
}));

interface Fixture {
  temp: TempAgent;
  filesRoot: string;
  agent: Agent;
  sim: EndpointSim;
  session: EndpointSession;
  states: ConnectionState[];
  registrations: RegistrationState[];
  logs: string[];
}

let fx: Fixture | undefined;
afterEach(async () => {
  if (!fx) return;
  await fx.session.stop();
  await fx.temp.close();
  await fx.sim.stop();
  fx = undefined;
});

async function setup(
  opts: {
    sim?: EndpointSimOptions;
    services?: Service[];
    policies?: Record<string, Policy>;
    url?: (sim: EndpointSim) => string;
    relistWaitMs?: number;
    listWaitMs?: number;
    start?: boolean;
  } = {},
): Promise<Fixture> {
  const sim = await EndpointSim.start({ token: 'tok-SECRET-42', ...opts.sim });
  const temp = await openTempAgent('advent-endpoint-', {
    services: opts.services,
    overrides: { policies: opts.policies },
  });
  const { filesRoot, agent } = temp;
  const session = new EndpointSession({
    id: 'p-endpoint',
    name: 'My endpoint',
    url: () => (opts.url ? opts.url(sim) : sim.url),
    gate: agent.gate,
    tools: () => agent.toolEntries(),
    timing: FAST,
    relistWaitMs: opts.relistWaitMs,
    listWaitMs: opts.listWaitMs,
  });
  // The Agent re-registers its own sessions; this one is wired by hand, the same way.
  agent.registry.events.on('changed', () => session.reregister());
  const f: Fixture = {
    temp,
    filesRoot,
    agent,
    sim,
    session,
    states: recordEvents(session, 'state'),
    registrations: recordEvents(session, 'registration'),
    logs: [],
  };
  session.events.on('log', (l) => f.logs.push(`${l.level}: ${l.message}`));
  fx = f;
  if (opts.start !== false) session.start();
  return f;
}

const names = (tools: { name: string }[]) => tools.map((t) => t.name).sort();

async function registered(f: Fixture): Promise<RegistrationState> {
  if (f.session.registrationState.state === 'registered') return f.session.registrationState;
  return nextEvent(f.session.events, 'registration', (r) => r.state === 'registered');
}

describe('XiaoZhi MCP endpoint session against the simulated endpoint server', () => {
  it('dials the URL, answers initialize and every tools/list page, and shows the services as registered', async () => {
    const f = await setup({ services: [rebootService] });
    const tools = await f.sim.waitForTools((t) => t.length > 0);
    // User-only services are not shown to a server that did not ask for them.
    expect(names(tools)).toEqual([...BUILTIN_NAMES].sort());
    const reg = await registered(f);
    expect(reg).toMatchObject({ state: 'registered', services: BUILTIN_NAMES });
    expect(f.session.state.status).toBe('ready');
    expect(f.sim.initializeResult).toMatchObject({
      protocolVersion: '2024-11-05',
      capabilities: { tools: { listChanged: true } },
      serverInfo: { name: expect.any(String), version: expect.any(String) },
    });
    const getTime = tools.find((t) => t.name === 'get_current_time')!;
    expect(getTime.inputSchema).toMatchObject({ type: 'object' });
    // The handshake's order as the server sent it, and our answers carry its ids.
    const first = JSON.parse(f.sim.received[0]!.text) as { id: number; result: unknown };
    expect(first.id).toBe(1);
    await f.sim.ping();
    expect(f.sim.violations).toEqual([]);
  });

  it('walks a listing of many pages without breaking a rule, and registers every service', async () => {
    const f = await setup({ services: manyServices });
    const tools = await f.sim.waitForTools((t) => t.length > 0);
    expect(tools).toHaveLength(manyServices.length + BUILTIN_NAMES.length);
    const pages = f.sim.received.filter((r) => /"tools":\[/.test(r.text));
    expect(pages.length).toBeGreaterThan(3);
    const reg = await registered(f);
    expect(reg.state === 'registered' && reg.services).toEqual(
      f.agent.toolEntries().map((t) => t.name),
    );
    expect((await f.sim.callTool('lookup_59', { q: 'x' })).text).toBe('lookup 59');
    expect(f.sim.violations).toEqual([]);
  });

  it('tells the window of a registration once, however often the server re-lists the same set', async () => {
    const f = await setup();
    await registered(f);
    const before = f.registrations.length;
    // A server re-listing in a loop: each walk used to be a new "registered" for every window.
    for (let i = 0; i < 200; i++) await f.sim.relist();
    expect(f.registrations.length).toBe(before);
    expect(f.session.registrationState).toMatchObject({
      state: 'registered',
      services: BUILTIN_NAMES,
    });
    // A changed set is news again.
    await f.agent.setServiceEnabled('get_current_time', false);
    await until(
      () => f.registrations.at(-1)?.state === 'registered' && f.registrations.length > before,
      'the changed set registered',
    );
    expect(f.registrations.at(-1)).toMatchObject({
      state: 'registered',
      services: BUILTIN_NAMES.filter((n) => n !== 'get_current_time'),
    });
  });

  it('lists user-only services to a server that asks for them, and their calls still need the user', async () => {
    const f = await setup({ sim: { withUserTools: true }, services: [rebootService] });
    f.agent.broker.attach({ name: 'test' });
    const prompts: string[] = [];
    f.agent.events.on('prompt', (p) => {
      prompts.push(p.service);
      f.agent.answerPrompt(p.id, 'once');
    });
    const tools = await f.sim.waitForTools((t) => t.length > 0);
    expect(tools.find((t) => t.name === 'reboot_device')?.annotations).toEqual({
      audience: ['user'],
    });
    const result = await f.sim.callTool('reboot_device', {});
    expect(result).toMatchObject({ isError: false, text: 'rebooting' });
    expect(prompts).toEqual(['reboot_device']);
  });

  it('runs a read service through the gate and records it with dialect endpoint and the connection name', async () => {
    const f = await setup();
    await f.sim.waitForTools((t) => t.length > 0);
    const result = await f.sim.callTool('get_current_time', { format: 'detailed' });
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.text)).toHaveProperty('iso');
    const audit = await f.agent.queryAudit({ service: 'get_current_time' });
    expect(audit.records).toHaveLength(1);
    expect(audit.records[0]).toMatchObject({
      connection: 'My endpoint',
      dialect: 'endpoint',
      decision: 'auto',
      outcome: 'ok',
    });
    expect(f.sim.violations).toEqual([]);
  });

  it('asks the user before a write service runs, and writes the file only once allowed', async () => {
    const f = await setup();
    f.agent.broker.attach({ name: 'test' });
    const prompts: string[] = [];
    f.agent.events.on('prompt', (p) => {
      prompts.push(p.connection.name);
      f.agent.answerPrompt(p.id, 'once');
    });
    await f.sim.waitForTools((t) => t.length > 0);
    const result = await f.sim.callTool('create_file', { filename: 'hello.txt', content: 'hi' });
    expect(result).toMatchObject({ isError: false });
    expect(prompts).toEqual(['My endpoint']);
    expect(await readFile(path.join(f.filesRoot, 'hello.txt'), 'utf8')).toBe('hi');
  });

  it('tells the server why a refused call did not run, in the result text the servers read', async () => {
    const f = await setup();
    f.agent.broker.attach({ name: 'test' });
    f.agent.events.on('prompt', (p) => f.agent.answerPrompt(p.id, 'deny'));
    await f.sim.waitForTools((t) => t.length > 0);
    const result = await f.sim.callTool('create_file', { filename: 'no.txt', content: 'x' });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/declined to let 'create_file' run/);
    expect((result.raw as { result: { error: string } }).result.error).toBe(result.text);
    expect(existsSync(path.join(f.filesRoot, 'no.txt'))).toBe(false);
    const audit = await f.agent.queryAudit({ service: 'create_file' });
    expect(audit.records[0]).toMatchObject({ decision: 'denied', dialect: 'endpoint' });
  });

  it('answers protocol mistakes with JSON-RPC errors: unknown tool -32601, bad arguments -32602', async () => {
    const f = await setup();
    await f.sim.waitForTools((t) => t.length > 0);
    const unknown = await f.sim.callTool('launch_rockets', {});
    expect(unknown.raw).toMatchObject({ error: { code: -32601 } });
    expect(unknown.text).toMatch(/no service named 'launch_rockets'/);
    const bad = await f.sim.callTool('create_file', { filename: 42 });
    expect(bad.raw).toMatchObject({ error: { code: -32602 } });
    expect(f.sim.violations).toEqual([]);
  });

  it('sends tools/list_changed when a service is switched off, and the server re-lists without it', async () => {
    const f = await setup();
    await f.sim.waitForTools((t) => t.length === BUILTIN_NAMES.length);
    await registered(f);
    await f.agent.setServiceEnabled('create_file', false);
    const tools = await f.sim.waitForTools((t) => !t.some((x) => x.name === 'create_file'));
    expect(names(tools)).toEqual(builtinsWithout('create_file').sort());
    expect(f.sim.listChangedCount).toBe(1);
    await until(
      () => f.session.registrationState.state === 'registered',
      'registered after the change',
    );
    expect(f.session.registrationState).toMatchObject({
      services: builtinsWithout('create_file'),
    });
    // Between the change and the new listing, the registration said so.
    expect(f.registrations.map((r) => r.state)).toEqual([
      'registered',
      'registering',
      'registered',
    ]);
    // The same link: a server that re-lists needs no reconnect.
    expect(f.sim.connections).toBe(1);
    const off = await f.sim.callTool('create_file', { filename: 'a.txt', content: 'x' });
    expect(off.isError).toBe(true);
    expect(off.text).toMatch(/switched off/);
  });

  it('re-dials a server that ignores tools/list_changed, so it lists the changed set', async () => {
    const f = await setup({ sim: { relistOnChange: false }, relistWaitMs: 100 });
    await f.sim.waitForTools((t) => t.length === BUILTIN_NAMES.length);
    await registered(f);
    await f.agent.setServiceEnabled('create_file', false);
    const tools = await f.sim.waitForTools((t) => t.length === BUILTIN_NAMES.length - 1);
    expect(names(tools)).toEqual(builtinsWithout('create_file').sort());
    expect(f.sim.connections).toBe(2);
    // The old link ended with a close frame (normal closure), not a cut socket (1006).
    await until(() => f.sim.closeCodes.has(1), 'the first link to close');
    expect(f.sim.closeCodes.get(1)).toBe(1000);
    await until(() => f.session.registrationState.state === 'registered', 'registered again');
    expect(f.sim.violations).toEqual([]);
  });

  it('reconnects after the server drops the link and registers again', async () => {
    const f = await setup();
    await f.sim.waitForTools((t) => t.length > 0);
    await registered(f);
    f.sim.dropConnections();
    const reconnecting = await nextEvent(
      f.session.events,
      'state',
      (s) => s.status === 'reconnecting',
    );
    // `attempt` is the number of the dial to come: the first one was #1.
    expect(reconnecting).toMatchObject({ attempt: 2, nextAt: expect.any(Number) });
    await f.sim.waitForConnection(2);
    await until(() => f.session.registrationState.state === 'registered', 'registered again');
    expect(f.session.state.status).toBe('ready');
    const result = await f.sim.callTool('get_current_time', {});
    expect(result.isError).toBe(false);
  });

  it('never answers a call from a dropped link on the next one', async () => {
    const f = await setup({ services: [slowService(300)] });
    await f.sim.waitForTools((t) => t.length > 0);
    const started = nextEvent(f.agent.events, 'callStarted');
    const call = f.sim.callTool('slow_lookup', {});
    const lost = expect(call).rejects.toThrow(/closed before 'tools\/call' was answered/);
    await started;
    f.sim.dropConnections();
    await lost;
    await f.sim.waitForConnection(2);
    await until(
      () => f.agent.audit.select({}).some((r) => r.service === 'slow_lookup'),
      'the call recorded',
    );
    // The second connection saw only its own handshake answered.
    const second = f.sim.received.filter((r) => r.conn === 2).map((r) => JSON.parse(r.text));
    expect(second.some((m: { result?: { content?: unknown } }) => m.result?.content)).toBe(false);
    expect(f.sim.violations).toEqual([]);
    // Still recorded: the service ran.
    const audit = await f.agent.queryAudit({ service: 'slow_lookup' });
    expect(audit.records[0]).toMatchObject({ outcome: 'ok' });
  });

  it('keeps going after frames it cannot use: logs them and answers an error where an id is known', async () => {
    const f = await setup();
    await f.sim.waitForTools((t) => t.length > 0);
    const before = f.sim.received.length;
    f.sim.sendRaw('this is not json');
    f.sim.sendRaw(JSON.stringify([{ jsonrpc: '2.0', id: 901, method: 'ping' }]));
    f.sim.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: 902 }));
    f.sim.sendRaw(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 903,
        method: 'tools/call',
        params: { name: 'get_current_time', arguments: { pad: 'x'.repeat(MAX_FRAME_BYTES) } },
      }),
    );
    const replies = () =>
      f.sim.received
        .slice(before)
        .map((r) => JSON.parse(r.text) as { id: number; error?: { code: number } });
    await until(() => replies().length >= 3, 'three error replies');
    const byId = new Map(replies().map((r) => [r.id, r]));
    expect(byId.get(901)?.error?.code).toBe(-32600);
    expect(byId.get(902)?.error?.code).toBe(-32600);
    expect(byId.get(903)?.error?.code).toBe(-32600);
    expect(f.logs.some((l) => /^warn: a frame that is not JSON was ignored/.test(l))).toBe(true);
    expect(f.logs.some((l) => /^warn: a JSON-RPC batch of 1 was refused/.test(l))).toBe(true);
    expect(f.logs.some((l) => /^warn: a \d+-byte frame was ignored/.test(l))).toBe(true);
    // The link survived all of it.
    await f.sim.ping();
    expect(f.session.state.status).toBe('ready');
    expect(f.sim.connections).toBe(1);
  });

  it('drops a link that sends a frame too large to read at all, and dials again', async () => {
    const f = await setup();
    await f.sim.waitForTools((t) => t.length > 0);
    const dropped = nextEvent(f.session.events, 'state', (s) => s.status === 'reconnecting');
    f.sim.sendRaw('x'.repeat(3 * MAX_FRAME_BYTES));
    const s = await dropped;
    expect(s.status === 'reconnecting' && s.lastError).toMatch(/max payload size exceeded/i);
    await f.sim.waitForConnection(2);
    await until(() => f.session.registrationState.state === 'registered', 'registered again');
  });

  it('refuses chat, speech and voice with a clear message: an endpoint carries tools only', async () => {
    const f = await setup({ start: false });
    expect(f.session.capabilities).toEqual({ chat: false, voice: false, speak: false });
    for (const r of [f.session.sendText(), f.session.speak(), f.session.voiceStart()])
      expect(r).toEqual({
        ok: false,
        message: expect.stringMatching(/not possible on a XiaoZhi MCP endpoint/),
      });
    expect(f.session.voiceChunk()).toMatchObject({ ok: false });
    expect(f.session.voiceEnd()).toMatchObject({ ok: false });
    f.session.voiceCancel();
    f.session.interrupt();
  });
});

describe('XiaoZhi MCP endpoint: the token in the URL', () => {
  it('stops at a refused token (HTTP 401) without retrying, and the token is in no message', async () => {
    const f = await setup({ url: (sim) => sim.url.replace('tok-SECRET-42', 'tok-WRONG-99') });
    const offline = await nextEvent(f.session.events, 'state', (s) => s.status === 'offline');
    expect(offline).toMatchObject({ reason: 'auth_failed' });
    expect(offline.status === 'offline' && offline.message).toMatch(/HTTP 401/);
    expect(f.session.registrationState).toMatchObject({ state: 'failed' });
    await new Promise((r) => setTimeout(r, 150));
    expect(f.states.filter((s) => s.status === 'connecting')).toHaveLength(1);
    const everything = JSON.stringify([f.states, f.registrations, f.logs]);
    expect(everything).not.toContain('tok-WRONG-99');
  });

  it('keeps the token out of every state, registration and log line through drops and odd frames', async () => {
    const f = await setup();
    await f.sim.waitForTools((t) => t.length > 0);
    f.sim.sendRaw(`garbage ${f.sim.url}`);
    f.sim.dropConnections();
    await f.sim.waitForConnection(2);
    await until(() => f.session.registrationState.state === 'registered', 'registered again');
    await f.session.stop();
    const everything = JSON.stringify([f.states, f.registrations, f.logs]);
    expect(everything).not.toContain('tok-SECRET-42');
    expect(f.logs.some((l) => l.includes('token=***'))).toBe(true);
  });

  it('says the address is wrong when it is not a ws:// URL, without dialling', async () => {
    const f = await setup({ url: () => 'https://example.invalid/mcp/?token=tok-SECRET-42' });
    const offline = await nextEvent(f.session.events, 'state', (s) => s.status === 'offline');
    expect(offline).toMatchObject({ reason: 'config' });
    expect(offline.status === 'offline' && offline.message).toMatch(
      /not a ws:\/\/ or wss:\/\/ address/,
    );
    expect(JSON.stringify(offline)).not.toContain('tok-SECRET-42');
    expect(f.sim.connections).toBe(0);
  });
});

describe('XiaoZhi MCP endpoint: a server that never lists', () => {
  it('says so in the registration instead of "registering" forever', async () => {
    const silent = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => silent.once('listening', () => r()));
    try {
      const port = (silent.address() as AddressInfo).port;
      const f = await setup({ url: () => `ws://127.0.0.1:${port}/mcp/?token=x`, listWaitMs: 100 });
      const failed = await nextEvent(f.session.events, 'registration', (r) => r.state === 'failed');
      expect(failed).toEqual({
        state: 'failed',
        message: expect.stringMatching(/has not asked for the services within 0\.1 s/),
      });
      expect(f.session.state.status).toBe('ready');
    } finally {
      for (const ws of silent.clients) ws.terminate();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });
});

describe('XiaoZhi MCP endpoint: registration follows what the server has seen', () => {
  it('does not count a walk begun before a change as registered; the next full walk is', async () => {
    const raw = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => raw.once('listening', () => r()));
    try {
      const accepted = new Promise<WebSocket>((r) => raw.once('connection', r));
      const port = (raw.address() as AddressInfo).port;
      const f = await setup({ services: manyServices, url: () => `ws://127.0.0.1:${port}/` });
      const ws = await accepted;
      const inbox: Array<{ id?: number; method?: string; result?: unknown }> = [];
      ws.on('message', (d) => inbox.push(JSON.parse(String(d))));
      let nextId = 0;
      const list = async (cursor?: string) => {
        const id = ++nextId;
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: { cursor } }));
        await until(() => inbox.some((m) => m.id === id), `tools/list reply ${id}`);
        return inbox.find((m) => m.id === id)!.result as {
          tools: { name: string }[];
          nextCursor?: string;
        };
      };
      const walk = async () => {
        const names: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await list(cursor);
          names.push(...page.tools.map((t) => t.name));
          cursor = page.nextCursor;
        } while (cursor);
        return names;
      };

      const first = await list();
      expect(first.nextCursor).toBeDefined();
      await f.agent.setServiceEnabled('lookup_00', false);
      await until(
        () => inbox.some((m) => m.method === 'notifications/tools/list_changed'),
        'the change notification',
      );
      // The server goes on with its old walk: the pages it gets do not make a whole set.
      let cursor = first.nextCursor;
      while (cursor) cursor = (await list(cursor)).nextCursor;
      expect(f.session.registrationState.state).toBe('registering');
      const names = await walk();
      expect(names).not.toContain('lookup_00');
      expect(f.session.registrationState).toMatchObject({ state: 'registered', services: names });
    } finally {
      for (const ws of raw.clients) ws.terminate();
      await new Promise<void>((r) => raw.close(() => r()));
    }
  });
});

describe('XiaoZhi MCP endpoint: stop', () => {
  it('leaves no socket and does not reconnect afterwards', async () => {
    const f = await setup();
    await f.sim.waitForTools((t) => t.length > 0);
    await f.session.stop();
    expect(f.session.state).toMatchObject({ status: 'offline', reason: 'stopped' });
    await until(() => f.sim.openConnections === 0, 'the server to see the close');
    await new Promise((r) => setTimeout(r, 150));
    expect(f.sim.connections).toBe(1);
  });
});
