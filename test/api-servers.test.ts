/**
 * Several servers at once (issue 5 §4): an Advent server, a XiaoZhi server, a XiaoZhi MCP endpoint
 * and a robot server, all live through one CoreApi, all served the same services through the one
 * gate and recorded in the one audit log under their own connection names.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../app/api.js';
import type { ConnectionView, ProfileView } from '../app/contract/commands.js';
import { MemorySecretStore } from '../app/settings/secrets.js';
import { AdventSim } from '../sim/advent/server.js';
import { EndpointSim } from '../sim/endpoint/server.js';
import { RobotSim } from '../sim/robot/server.js';
import { XiaozhiSim } from '../sim/xiaozhi/server.js';
import type { WsTiming } from '../app/wire/kit/ws-dialer.js';
import { FAST } from './helpers/agent-harness.js';
import { nextEvent, until } from './helpers/wait.js';

const WS_FAST: Partial<WsTiming> = {
  backoffInitialMs: 20,
  backoffMaxMs: 200,
  closeWaitMs: 200,
  healthyResetMs: 2000,
};
const ENDPOINT_TOKEN = ['ep', 'secret', 'value'].join('-');

let dir: string;
let api: CoreApi;
let secrets: MemorySecretStore;
let advent: AdventSim;
let xiaozhi: XiaozhiSim;
let endpoint: EndpointSim;
let robot: RobotSim;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-servers-'));
  secrets = new MemorySecretStore();
  [advent, xiaozhi, endpoint, robot] = await Promise.all([
    AdventSim.start({ demo: false, disconnectCloseMs: 10 }),
    XiaozhiSim.start({ demo: false }),
    EndpointSim.start({ token: ENDPOINT_TOKEN }),
    RobotSim.start({}),
  ]);
  api = await CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets,
    timing: FAST,
    wsTiming: WS_FAST,
    version: '9.9.9',
    host: 'browser',
  });
});
afterEach(async () => {
  await api.close();
  await Promise.all([advent.stop(), xiaozhi.stop(), endpoint.stop(), robot.stop()]);
  await rm(dir, { recursive: true, force: true });
});

/** Save one profile of each kind through the API (as the Connections page does) and connect all. */
async function connectAll(): Promise<
  Record<'advent' | 'xiaozhi' | 'endpoint' | 'robot', ProfileView>
> {
  const a = await api.saveConnection(
    { kind: 'advent', name: 'Advent', host: '127.0.0.1', port: advent.port },
    'advent-token',
  );
  const x = await api.saveConnection({ kind: 'xiaozhi', name: 'XiaoZhi', url: xiaozhi.url });
  const e = await api.saveConnection({ kind: 'endpoint', name: 'Endpoint', url: endpoint.url });
  const r = await api.saveConnection({ kind: 'robot', name: 'Robot', url: robot.url });
  const profiles = { advent: a, xiaozhi: x, endpoint: e, robot: r };
  const readyAll = Object.values(profiles).map((p) =>
    nextEvent(
      api.events,
      'connection',
      (c) => c.profile.id === p.id && c.state.status === 'ready',
      10_000,
    ),
  );
  for (const p of Object.values(profiles)) await api.connect(p.id);
  await Promise.all(readyAll);
  return profiles;
}

describe('several servers of every kind at once', () => {
  it('each kind saves with what it needs: generated identities kept, the endpoint token moved out of settings', async () => {
    const { xiaozhi: x, endpoint: e, robot: r } = await connectAll();
    expect(x).toMatchObject({ kind: 'xiaozhi', hasToken: false });
    expect(x.kind === 'xiaozhi' && x.deviceId).toMatch(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
    expect(x.kind === 'xiaozhi' && x.clientId).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.kind === 'robot' && r.macAddr).toMatch(/^([0-9A-F]{2}-){5}[0-9A-F]{2}$/);
    expect(e).toMatchObject({ kind: 'endpoint', hasToken: true });
    expect(e.kind === 'endpoint' && e.url).not.toContain(ENDPOINT_TOKEN);

    // The same device on the next save: an edit without identities keeps the generated ones.
    const again = await api.saveConnection({
      id: x.id,
      kind: 'xiaozhi',
      name: 'XiaoZhi 2',
      url: xiaozhi.url,
    });
    expect(again.kind === 'xiaozhi' && [again.deviceId, again.clientId]).toEqual(
      x.kind === 'xiaozhi' && [x.deviceId, x.clientId],
    );
    // The servers saw those identities.
    const settingsFile = await readFile(path.join(dir, 'data', 'settings.json'), 'utf8');
    expect(settingsFile).not.toContain(ENDPOINT_TOKEN);
    const snapshot = await api.snapshot();
    expect(snapshot.connections.map((c) => [c.profile.kind, c.capabilities.chat])).toEqual([
      ['advent', true],
      ['xiaozhi', true],
      ['endpoint', false],
      ['robot', true],
    ]);
  });

  it('every server calls create_file through the same gate: asked once each, decided per call, audited under each connection', async () => {
    await connectAll();
    await Promise.all([
      until(() => advent.registrations().length > 0, 'Advent register'),
      xiaozhi.waitForTools(),
      endpoint.waitForTools((t) => t.length > 0),
      robot.waitForRegistration(),
    ]);
    const detach = api.attachUi('test');
    const asked: string[] = [];
    api.events.on('prompt', (p) => {
      asked.push(p.connection.name);
      void api.answerPrompt(p.id, p.connection.name === 'Robot' ? 'deny' : 'once');
    });

    const note = (who: string) => ({ filename: `${who}.txt`, content: `from ${who}` });
    const [a, x, e, r] = await Promise.all([
      advent.peer().call('create_file', note('advent')),
      xiaozhi.callTool('create_file', note('xiaozhi')),
      endpoint.callTool('create_file', note('endpoint')),
      robot.execute('create_file', note('robot')),
    ]);
    detach();

    expect(asked.sort()).toEqual(['Advent', 'Endpoint', 'Robot', 'XiaoZhi']);
    expect(a).toMatchObject({ success: true });
    expect(x.isError).toBe(false);
    expect(e.isError).toBe(false);
    expect(r.error?.code).toBeGreaterThanOrEqual(-32099);
    expect(r.error?.code).toBeLessThanOrEqual(-32000);
    expect(r.error?.message).toMatch(/declined/i);
    for (const who of ['advent', 'xiaozhi', 'endpoint'])
      expect(await readFile(path.join(dir, 'files', `${who}.txt`), 'utf8')).toBe(`from ${who}`);
    await expect(readFile(path.join(dir, 'files', 'robot.txt'))).rejects.toThrow();

    const audit = await api.queryAudit({ service: 'create_file', order: 'asc' });
    const rows = audit.records.map((rec) => [
      rec.connection,
      rec.dialect,
      rec.decision,
      rec.outcome,
    ]);
    expect(rows.sort()).toEqual([
      ['Advent', 'advent', 'allowed-once', 'ok'],
      ['Endpoint', 'endpoint', 'allowed-once', 'ok'],
      ['Robot', 'robot', 'denied', 'refused'],
      // The robot server sends each execute twice (once without an id): recorded, not run.
      ['Robot', 'robot', 'duplicate', 'refused'],
      ['XiaoZhi', 'xiaozhi', 'allowed-once', 'ok'],
    ]);
    expect((await api.verifyAudit()).ok).toBe(true);
  });

  it('switching a service off tells every server at once, each in its own dialect', async () => {
    await connectAll();
    await Promise.all([
      until(() => advent.registrations().length > 0, 'Advent register'),
      xiaozhi.waitForTools(),
      endpoint.waitForTools((t) => t.some((tool) => tool.name === 'get_current_time')),
      robot.waitForRegistration(),
    ]);
    const listingsBefore = xiaozhi.connections.length;
    const latest = new Map<string, ConnectionView>();
    api.events.on('connection', (c) => latest.set(c.profile.id, c));

    await api.setServiceEnabled('get_current_time', false);

    const without = (names: string[]) =>
      !names.includes('get_current_time') && names.includes('create_file');
    await until(
      () => without(Object.keys(advent.registrations().at(-1) ?? {})),
      'Advent re-register without get_current_time',
    );
    await endpoint.waitForTools((t) => without(t.map((tool) => tool.name)));
    await robot.waitForRegistration((reg) => without(reg.tools.map((t) => String(t.name))));
    // XiaoZhi servers ignore list_changed: the agent reconnects so the server lists again.
    await until(
      () =>
        xiaozhi.connections.length > listingsBefore && without(xiaozhi.tools.map((t) => t.name)),
      'XiaoZhi re-listed after a reconnect',
      10_000,
    );
    // Each connection shows what it registered (the services page lists these per connection).
    await until(
      () =>
        latest.size === 4 &&
        [...latest.values()].every(
          (c) =>
            c.registration?.state === 'registered' &&
            !c.registration.services.includes('get_current_time'),
        ),
      'every connection registered without get_current_time',
    );
  });

  it('connects every kind marked "connect when the app starts" on the next start, tokens or not', async () => {
    const x = await api.saveConnection({
      kind: 'xiaozhi',
      name: 'XiaoZhi',
      url: xiaozhi.url,
      autoConnect: true,
    });
    const r = await api.saveConnection({
      kind: 'robot',
      name: 'Robot',
      url: robot.url,
      autoConnect: true,
    });
    const e = await api.saveConnection({
      kind: 'endpoint',
      name: 'Endpoint',
      url: endpoint.url,
      autoConnect: true,
    });
    await api.close();
    api = await CoreApi.open({
      dataDir: path.join(dir, 'data'),
      defaultFilesRoot: path.join(dir, 'files'),
      secrets,
      timing: FAST,
      wsTiming: WS_FAST,
      version: '9.9.9',
      host: 'browser',
    });
    const live = (await api.snapshot()).connections.filter((c) => c.state.status !== 'idle');
    expect(live.map((c) => c.profile.id).sort()).toEqual([e.id, r.id, x.id].sort());
  });

  it('chat goes to the active connection; a tool-only endpoint says it has no chat', async () => {
    const { xiaozhi: x, endpoint: e } = await connectAll();
    await api.setActiveConnection(e.id);
    await expect(api.sendText('hello')).rejects.toMatchObject({
      code: 'not_supported',
      params: { name: 'Endpoint', what: 'chat' },
      message: "chat is not possible on 'Endpoint' (XiaoZhi MCP endpoint)",
    });
    await expect(api.voiceStart()).rejects.toMatchObject({
      code: 'not_supported',
      params: { what: 'voice' },
    });

    await api.setActiveConnection(x.id);
    const sent = await api.sendText('hello there');
    await until(
      () => xiaozhi.received.some((m) => m.kind === 'text' && m.text.includes('hello there')),
      'XiaoZhi received the typed turn',
    );
    expect(sent.taskId).toMatch(/^[0-9a-f]{8}$/);
    expect(advent.turns.length).toBe(0);
  });
});
