import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ConnectionState } from '../../../app/contract/connection.js';
import type { Service } from '../../../app/services/service.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { nextEvent, until } from '../../helpers/wait.js';
import { CLIENT_ID, DEVICE_ID, type Pair, closeOpenPair, open } from './harness.js';
import { builtinsWithout } from '../../helpers/builtins.js';

afterEach(closeOpenPair);

const reached = (p: Pair, pred: (s: ConnectionState) => boolean) =>
  p.states.find(pred) ?? nextEvent(p.session.events, 'state', pred);

/** Services that make the tool list long enough to need several pages. */
function manyServices(n: number): Service[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `bulk_${String(i).padStart(3, '0')}`,
    title: `Bulk ${i}`,
    description: `Bulk service number ${i}. ${'It does one small thing and says so at length. '.repeat(6)}`,
    parameters: { type: 'object', properties: { q: { type: 'string', description: 'a query' } } },
    risk: 'read',
    timeoutMs: 1000,
    run: async () => `bulk ${i}`,
  }));
}

const echoService = (name: string, data: unknown, extra: Partial<Service> = {}): Service => ({
  name,
  title: name,
  description: `returns a fixed result (${name})`,
  parameters: { type: 'object', properties: {} },
  risk: 'read',
  timeoutMs: 1000,
  run: async () => data,
  ...extra,
});

// ------------------------------------------------------------------------------------------------

describe('XiaoZhi device: connecting', () => {
  it('sends the bearer token, protocol version and identity as headers, then the device hello', async () => {
    const p = await open({
      sim: { token: 'tok-1' },
      session: { token: () => 'tok-1', protocolVersion: 2 },
    });
    const c = p.sim.connections[0]!;
    expect(c.headers.authorization).toBe('Bearer tok-1');
    expect(c.headers['protocol-version']).toBe('2');
    expect(c.headers['device-id']).toBe(DEVICE_ID);
    expect(c.headers['client-id']).toBe(CLIENT_ID);
    expect(c.identity).toBe('headers');
    expect(c.query).toEqual({});
    expect(c.hello).toEqual({
      type: 'hello',
      version: 2,
      transport: 'websocket',
      features: { mcp: true },
      audio_params: { format: 'opus', sample_rate: 16000, channels: 1, frame_duration: 60 },
    });
    const first = p.sim.received[0]!;
    expect(first.kind === 'text' && first.json).toEqual(c.hello);
    expect(p.sim.violations).toEqual([]);
  });

  it('sends no Authorization at all without a token', async () => {
    const p = await open({ session: { token: () => '  ' } });
    const c = p.sim.connections[0]!;
    expect(c.headers.authorization).toBeUndefined();
    expect(c.token).toBeUndefined();
    expect(p.sim.violations).toEqual([]);
  });

  it('can put device-id, client-id and authorization in the query instead, and never shows the token', async () => {
    const p = await open({
      sim: { token: 'sekrit-42' },
      session: { token: async () => 'sekrit-42', authInQuery: true },
    });
    const c = p.sim.connections[0]!;
    expect(c.identity).toBe('query');
    expect(c.query).toEqual({
      'device-id': DEVICE_ID,
      'client-id': CLIENT_ID,
      authorization: 'Bearer sekrit-42',
    });
    expect(c.headers['device-id']).toBeUndefined();
    expect(c.headers.authorization).toBeUndefined();
    expect(c.headers['protocol-version']).toBe('1');
    expect(p.sim.violations).toEqual([]);
    // A refused reconnect quotes the address: the token must not be in it.
    await p.sim.stop();
    await reached(p, (s) => s.status === 'reconnecting');
    expect(JSON.stringify([p.states, p.logs])).not.toContain('sekrit-42');
  });

  it('goes offline on HTTP 401 and does not hammer the server', async () => {
    const p = await open({
      sim: { token: 'right' },
      session: { token: () => 'wrong-token-xyz' },
      waitReady: false,
    });
    const offline = await reached(p, (s) => s.status === 'offline');
    expect(offline).toMatchObject({ status: 'offline', reason: 'auth_failed' });
    expect(offline.status === 'offline' && offline.message).toMatch(/HTTP 401/);
    await new Promise((r) => setTimeout(r, 150));
    expect(p.sim.refused).toEqual([{ status: 401, reason: 'Unauthorized' }]);
    expect(p.sim.connections).toHaveLength(0);
    expect(p.session.registrationState).toMatchObject({ state: 'failed' });
    expect(JSON.stringify([p.states, p.logs])).not.toContain('wrong-token-xyz');
  });

  it('refuses to dial with a device id that is not a MAC, saying what is expected', async () => {
    const p = await open({ session: { deviceId: 'my-laptop' }, waitReady: false });
    const offline = await reached(p, (s) => s.status === 'offline');
    expect(offline).toMatchObject({ reason: 'config' });
    expect(offline.status === 'offline' && offline.message).toMatch(/aa:bb:cc:dd:ee:ff/);
    expect(p.sim.connections).toHaveLength(0);
  });

  it('fails with a clear error when the server never says hello, then dials again', async () => {
    const clock = new FakeClock(Date.now());
    const p = await open({
      sim: { sendHello: false },
      session: { clock },
      waitReady: false,
    });
    await reached(p, (s) => s.status === 'authenticating');
    clock.advance(9_999);
    expect(p.session.state.status).toBe('authenticating');
    clock.advance(1);
    const retry = await reached(p, (s) => s.status === 'reconnecting');
    expect(retry.status === 'reconnecting' && retry.lastError).toMatch(
      /sent no hello within 10 s.*xiaozhi\/v1/,
    );
    clock.advance(1_000);
    await p.sim.waitForConnection(2);
  });

  it('answers MCP that comes before the server hello (it may never come)', async () => {
    const p = await open({ sim: { sendHello: false }, waitReady: false });
    await p.sim.waitForTools(1);
    expect(p.sim.conn().initializeResult).toEqual({
      protocolVersion: '2024-11-05',
      capabilities: { tools: {} },
      serverInfo: { name: 'advent-agent', version: '0.1.0' },
    });
    expect(p.session.state.status).toBe('authenticating');
    // No hello yet: the session id the MCP envelope carried is echoed.
    const reply = p.sim.messages('mcp')[0]!;
    expect(reply.session_id).toBe(p.sim.connections[0]!.sessionId);
    expect(p.session.currentSessionId).toBeUndefined();
  });

  it('keeps the session id of the hello and echoes it in every later message', async () => {
    const p = await open({ sim: { sessionId: (n) => `sess-${n}`, mcpBeforeHello: false } });
    await p.sim.waitForTools(1);
    expect(p.session.currentSessionId).toBe('sess-1');
    p.session.sendText('hello');
    await p.sim.waitUntil(() => p.sim.messages('listen')[0], 'listen');
    const after = p.sim.received.slice(1).filter((r) => r.kind === 'text');
    expect(after.length).toBeGreaterThan(2);
    for (const r of after)
      expect((r as { json: { session_id?: unknown } }).json.session_id).toBe('sess-1');
    expect(p.sim.violations).toEqual([]);
  });

  it('sends {"type":"ping"} when idle for keepAliveMs', async () => {
    const clock = new FakeClock(Date.now());
    const p = await open({ session: { clock, keepAliveMs: 30_000 } });
    await p.sim.waitForTools(1);
    clock.advance(30_000);
    const ping = await p.sim.waitUntil(() => p.sim.messages('ping')[0], 'a ping');
    expect(ping.session_id).toBe(p.sim.connections[0]!.sessionId);
    expect(p.sim.violations).toEqual([]);
  });

  it('dials again when the server drops the session, with a new hello and a fresh session id', async () => {
    const p = await open();
    await p.sim.waitForTools(1);
    const first = p.session.currentSessionId;
    p.sim.dropConnections();
    await reached(p, (s) => s.status === 'reconnecting');
    await nextEvent(p.session.events, 'state', (s) => s.status === 'ready');
    await p.sim.waitForTools(2);
    const second = p.sim.connections[1]!;
    expect(second.hello).toMatchObject({ type: 'hello', features: { mcp: true } });
    expect(p.session.currentSessionId).toBe(second.sessionId);
    expect(second.sessionId).not.toBe(first);
    expect(p.session.registrationState).toMatchObject({ state: 'registered' });
    expect(p.sim.violations).toEqual([]);
  });

  it('stops cleanly: socket closed, no timer left, state offline', async () => {
    const clock = new FakeClock(Date.now());
    const p = await open({ session: { clock, keepAliveMs: 5_000 } });
    await p.sim.waitForTools(1);
    await p.session.stop();
    expect(p.session.state).toMatchObject({ status: 'offline', reason: 'stopped' });
    expect(clock.pendingTimers()).toBe(0);
    await until(() => p.sim.openConnections === 0, 'the server to see the close');
    expect(p.sim.pendingTimers).toBe(0);
  });
});

describe('XiaoZhi device: tools through the gate', () => {
  it('lists many tools in pages under 8000 bytes, each once, cursor = first tool not sent', async () => {
    const p = await open({ agent: { services: manyServices(60) } });
    await p.sim.waitForTools(1);
    const expected = p.agent.toolEntries().map((t) => t.name);
    expect(p.sim.tools.map((t) => t.name)).toEqual(expected);

    const pages = p.sim
      .messages('mcp')
      .map(
        (m) =>
          m.payload as {
            id?: unknown;
            result?: { tools?: { name: string }[]; nextCursor?: string };
          },
      )
      .filter((m) => m.id === 2);
    expect(pages.length).toBeGreaterThan(2);
    const seen: string[] = [];
    pages.forEach((page, i) => {
      expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(8000);
      const names = page.result!.tools!.map((t) => t.name);
      seen.push(...names);
      const next = pages[i + 1];
      if (next) expect(page.result!.nextCursor).toBe(next.result!.tools![0]!.name);
      else expect(page.result!.nextCursor).toBeUndefined();
    });
    expect(seen).toEqual(expected);
    const last = p.registrations.at(-1)!;
    expect(last).toMatchObject({ state: 'registered', services: expected });
    expect(p.registrations.filter((r) => r.state === 'registered')).toHaveLength(1);
    expect(p.sim.violations).toEqual([]);
  });

  it('lists user-only tools only for withUserTools, marked for the user', async () => {
    const userOnly = echoService('reboot_pc', 'ok', { userOnly: true, risk: 'system' });
    const plain = await open({ agent: { services: [userOnly] } });
    await plain.sim.waitForTools(1);
    expect(plain.sim.tools.map((t) => t.name)).not.toContain('reboot_pc');
    await plain.close();

    const p = await open({ agent: { services: [userOnly] }, sim: { withUserTools: true } });
    await p.sim.waitForTools(1);
    const listed = p.sim.tools.find((t) => t.name === 'reboot_pc');
    expect(listed?.annotations).toEqual({ audience: ['user'] });
    expect(p.sim.tools.find((t) => t.name === 'get_current_time')?.annotations).toBeUndefined();
  });

  it('runs an allowed call and answers its text; the call is audited for this connection', async () => {
    const p = await open();
    await p.sim.waitForTools(1);
    const result = await p.sim.callTool('get_current_time', { format: 'simple' });
    expect(result.isError).toBe(false);
    expect(result.text).toMatch(/\d{1,2}:\d{2}/);
    const audit = await p.agent.queryAudit({ service: 'get_current_time' });
    expect(audit.records[0]).toMatchObject({
      connection: 'XiaoZhi test',
      dialect: 'xiaozhi',
      outcome: 'ok',
    });
  });

  it('asks the user before a write, and runs it once allowed', async () => {
    const p = await open();
    p.agent.broker.attach({ name: 'test' });
    p.agent.events.on('prompt', (prompt) => p.agent.answerPrompt(prompt.id, 'once'));
    await p.sim.waitForTools(1);
    const result = await p.sim.callTool('create_file', { filename: 'hi.txt', content: 'hello' });
    expect(result.isError).toBe(false);
    expect(await readFile(path.join(p.filesRoot, 'hi.txt'), 'utf8')).toBe('hello');
  });

  it('answers a denied call with isError and the refusal, and runs nothing', async () => {
    const p = await open({ agent: { overrides: { policies: { create_file: 'deny' } } } });
    await p.sim.waitForTools(1);
    const result = await p.sim.callTool('create_file', { filename: 'no.txt', content: 'x' });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/blocked the service 'create_file'/);
    expect((result.raw.result as { error?: string }).error).toBe(result.text);
    expect(existsSync(path.join(p.filesRoot, 'no.txt'))).toBe(false);
    const audit = await p.agent.queryAudit({ service: 'create_file' });
    expect(audit.records[0]).toMatchObject({ decision: 'denied' });
  });

  it('answers an unknown tool with -32601 and bad params with -32602', async () => {
    const p = await open();
    await p.sim.waitForTools(1);
    const unknown = await p.sim.callTool('launch_rockets', {});
    expect(unknown).toMatchObject({ isError: true, code: -32601 });
    const bad = await p.sim.callTool('get_current_time', { format: 'sundial' });
    expect(bad).toMatchObject({ isError: true, code: -32602 });
    expect(bad.text).toMatch(/format/);
  });

  it('echoes the request id with its value and type, number or string', async () => {
    const p = await open();
    await p.sim.waitForTools(1);
    const numeric = await p.sim.callTool('get_current_time', {}, { id: 41 });
    expect(numeric.raw.id).toBe(41);
    const text = await p.sim.callTool('get_current_time', {}, { id: '41' });
    expect(text.raw.id).toBe('41');
    expect(p.sim.violations).toEqual([]);
  });

  it('gives a tools/call without an id no reply at all', async () => {
    const p = await open();
    await p.sim.waitForTools(1);
    const before = p.sim.messages('mcp').length;
    p.sim.conn().notify('tools/call', { name: 'get_current_time', arguments: {} });
    // A ping after it: its reply proves the notification was handled first and answered nothing.
    const pong = await p.sim.conn().request('ping', {}, 77);
    expect(pong).toEqual({ jsonrpc: '2.0', id: 77, result: {} });
    const after = p.sim.messages('mcp').slice(before);
    expect(after.map((m) => (m.payload as { id?: unknown }).id)).toEqual([77]);
    expect(p.logs.join('\n')).toMatch(/without an id was ignored/);
  });

  it('cuts a result over 8 KB and says so', async () => {
    const big = 'x'.repeat(20_000);
    const p = await open({ agent: { services: [echoService('big_result', big)] } });
    await p.sim.waitForTools(1);
    const result = await p.sim.callTool('big_result', {});
    expect(result.isError).toBe(false);
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(8000);
    expect(result.text).toMatch(/cut: the result was 20000 bytes/);
  });

  it('after a service toggle sends tools/list_changed, reconnects and is listed again', async () => {
    const p = await open();
    p.agent.registry.events.on('changed', () => p.session.reregister());
    await p.sim.waitForTools(1);
    expect(p.sim.tools.map((t) => t.name)).toContain('create_file');
    await p.agent.setServiceEnabled('create_file', false);
    await p.sim.waitUntil(() => (p.sim.listChangedCount ? true : undefined), 'list_changed');
    expect(p.sim.messages('mcp', 1).at(-1)!.payload).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
    });
    const tools = await p.sim.waitForTools(2);
    expect(tools.map((t) => t.name)).toEqual(builtinsWithout('create_file'));
    expect(p.sim.connections).toHaveLength(2);
    expect(p.logs.join('\n')).toMatch(/info: reconnecting so the server lists the services again/);
    await until(() => p.session.registrationState.state === 'registered', 'registered again');
    expect(p.session.registrationState).toMatchObject({
      services: builtinsWithout('create_file'),
    });
    expect(p.sim.violations).toEqual([]);
  });

  it('reconnects after a toggle with a close frame, and toggles do not grow the backoff of a real outage', async () => {
    const clock = new FakeClock(Date.now());
    const p = await open({
      session: {
        clock,
        timing: { backoffInitialMs: 1000, backoffMaxMs: 60_000, jitter: 0 },
      },
    });
    p.agent.registry.events.on('changed', () => p.session.reregister());
    await p.sim.waitForTools(1);
    await p.agent.setServiceEnabled('create_file', false);
    await p.sim.waitForTools(2);
    await p.agent.setServiceEnabled('create_file', true);
    await p.sim.waitForTools(3);
    await until(
      () => p.sim.connections.filter((c) => c.closeCode !== undefined).length === 2,
      'both replaced links to close',
    );
    // Each replaced link got a close frame: the server saw a normal closure, not 1006.
    expect(p.sim.connections.map((c) => c.closeCode)).toEqual([1000, 1000, undefined]);
    // A real outage now waits the first step of the backoff, as after any healthy link.
    p.sim.dropConnections();
    const s = await reached(
      p,
      (x) =>
        x.status === 'reconnecting' &&
        x.lastError !== '' &&
        !/lists the services/.test(x.lastError),
    );
    expect(s).toMatchObject({ status: 'reconnecting', attempt: 2 });
    expect(s.status === 'reconnecting' && s.nextAt - clock.now()).toBe(1000);
  });

  it('without reconnectOnToolsChanged only notifies, and says the server has not re-listed', async () => {
    const p = await open({ session: { reconnectOnToolsChanged: false } });
    p.agent.registry.events.on('changed', () => p.session.reregister());
    await p.sim.waitForTools(1);
    await p.agent.setServiceEnabled('create_file', false);
    await p.sim.waitUntil(() => (p.sim.listChangedCount ? true : undefined), 'list_changed');
    expect(p.sim.connections).toHaveLength(1);
    expect(p.session.registrationState).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(/reconnect to update/),
    });
  });

  it('answers initialize with the vision capability kept for camera-like services', async () => {
    const vision = { url: 'http://127.0.0.1:9/vision', token: 'v-tok' };
    const p = await open({ sim: { initializeParams: { capabilities: { vision } } } });
    await p.sim.waitForTools(1);
    expect(p.session.vision).toEqual(vision);
  });
});
