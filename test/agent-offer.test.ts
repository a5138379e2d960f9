/**
 * What each connection is offered (the selection on the Services page), through every dialect's
 * simulator at once: each server is told exactly its set, a change re-registers only the
 * connection it concerns (once), and a call to a service it was not given is refused by the gate
 * as unknown — nothing run, audited. The selection is saved, bounded, and shared by MCP apps.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../app/api.js';
import { MAX_OFFER_NAMES, MCP_CLIENTS_OFFER } from '../app/contract/offer.js';
import type { ProfileView } from '../app/contract/commands.js';
import { MemorySecretStore } from '../app/settings/secrets.js';
import { validateSettings } from '../app/settings/validate.js';
import { defaultSettings } from '../app/settings/schema.js';
import { AdventSim } from '../sim/advent/server.js';
import { EndpointSim } from '../sim/endpoint/server.js';
import { RobotSim } from '../sim/robot/server.js';
import { XiaozhiSim } from '../sim/xiaozhi/server.js';
import { FAST } from './helpers/agent-harness.js';
import { BUILTIN_NAMES, builtinsWithout } from './helpers/builtins.js';
import { nextEvent, until } from './helpers/wait.js';
import { FAST_WS } from './helpers/ws-agent.js';

let dir: string;
let api: CoreApi;
let advent: AdventSim;
let xiaozhi: XiaozhiSim;
let endpoint: EndpointSim;
let robot: RobotSim;

const open = (secrets = new MemorySecretStore()) =>
  CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets,
    timing: FAST,
    wsTiming: FAST_WS,
    version: '1.0.0',
    host: 'browser',
  });

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-offer-'));
  [advent, xiaozhi, endpoint, robot] = await Promise.all([
    AdventSim.start({ demo: false, disconnectCloseMs: 10 }),
    XiaozhiSim.start({ demo: false }),
    EndpointSim.start({ token: 'ep-token' }),
    RobotSim.start({}),
  ]);
  api = await open();
});
afterEach(async () => {
  await api.close();
  await Promise.all([advent.stop(), xiaozhi.stop(), endpoint.stop(), robot.stop()]);
  await rm(dir, { recursive: true, force: true });
});

interface Profiles {
  a: ProfileView;
  x: ProfileView;
  e: ProfileView;
  r: ProfileView;
}

async function saveAll(): Promise<Profiles> {
  const a = await api.saveConnection(
    { kind: 'advent', name: 'Advent', host: '127.0.0.1', port: advent.port },
    'token',
  );
  const x = await api.saveConnection({ kind: 'xiaozhi', name: 'XiaoZhi', url: xiaozhi.url });
  const e = await api.saveConnection({ kind: 'endpoint', name: 'Endpoint', url: endpoint.url });
  const r = await api.saveConnection({ kind: 'robot', name: 'Robot', url: robot.url });
  return { a, x, e, r };
}

async function connectAll(p: Profiles): Promise<void> {
  const all = [p.a, p.x, p.e, p.r];
  const ready = all.map((profile) =>
    nextEvent(
      api.events,
      'connection',
      (c) => c.profile.id === profile.id && c.state.status === 'ready',
      10_000,
    ),
  );
  for (const profile of all) await api.connect(profile.id);
  await Promise.all(ready);
}

const adventNames = () => Object.keys(advent.registrations().at(-1) ?? {}).sort();
const robotNames = () =>
  robot.registrations
    .at(-1)
    ?.tools.map((t) => String(t.name))
    .sort() ?? [];
const sorted = (names: readonly string[]) => [...names].sort();
const same = (a: readonly string[], b: readonly string[]) =>
  JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));

/** Counts each live session's re-registrations from now on. */
function countReregistrations(ids: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const id of ids) {
    const session = api.agent.session(id)!;
    counts[id] = 0;
    const original = session.reregister.bind(session);
    session.reregister = () => {
      counts[id] = (counts[id] ?? 0) + 1;
      original();
    };
  }
  return counts;
}

describe('which services each connection is offered', () => {
  it('each dialect is told exactly its own set: Advent register, XiaoZhi and endpoint tools/list, robot registerTools', async () => {
    const p = await saveAll();
    const forAdvent = ['get_current_time', 'list_reminders'];
    const forEndpoint = ['open_url', 'get_current_time', 'set_timer'];
    await api.setOffer(p.a.id, { only: forAdvent });
    await api.setOffer(p.x.id, { except: ['create_file', 'open_url'] });
    await api.setOffer(p.e.id, { only: forEndpoint });
    // The robot has no selection: every enabled service.
    await connectAll(p);

    const forXiaozhi = builtinsWithout('create_file', 'open_url');
    await until(() => same(adventNames(), forAdvent), 'Advent registered its two');
    const listed = await xiaozhi.waitForTools();
    expect(sorted(listed.map((t) => t.name))).toEqual(sorted(forXiaozhi));
    const atEndpoint = await endpoint.waitForTools((t) => t.length > 0);
    expect(sorted(atEndpoint.map((t) => t.name))).toEqual(sorted(forEndpoint));
    await robot.waitForRegistration();
    expect(robotNames()).toEqual(sorted(BUILTIN_NAMES));
    expect(adventNames()).toEqual(sorted(forAdvent));

    // The Services page counts from the same selection the core applies.
    expect(api.agent.toolEntriesFor(p.e.id).map((t) => t.name)).toEqual(
      BUILTIN_NAMES.filter((n) => forEndpoint.includes(n)),
    );
  });

  it('changing one connection’s selection re-registers it exactly once and leaves the others alone; a service toggle reaches only those offered it', async () => {
    const p = await saveAll();
    await api.setOffer(p.a.id, { only: ['get_current_time'] });
    await connectAll(p);
    await Promise.all([
      until(() => same(adventNames(), ['get_current_time']), 'Advent register'),
      xiaozhi.waitForTools(),
      endpoint.waitForTools((t) => t.length > 0),
      robot.waitForRegistration(),
    ]);
    const counts = countReregistrations([p.a.id, p.x.id, p.e.id, p.r.id]);

    // The endpoint loses two services: it alone is told, once.
    await api.setOffer(p.e.id, { except: ['open_url', 'create_file'] });
    expect(counts).toEqual({ [p.a.id]: 0, [p.x.id]: 0, [p.e.id]: 1, [p.r.id]: 0 });
    await endpoint.waitForTools((t) =>
      same(
        t.map((x) => x.name),
        builtinsWithout('open_url', 'create_file'),
      ),
    );

    // The same set written again (and a name of no service added) changes what nobody sees.
    await api.setOffer(p.e.id, { except: ['open_url', 'create_file', 'gone_tool'] });
    expect(counts[p.e.id]).toBe(1);

    // create_file switched off: every connection offered it re-registers once; Advent, which was
    // never offered it, is left alone.
    await api.setServiceEnabled('create_file', false);
    expect(counts).toEqual({ [p.a.id]: 0, [p.x.id]: 1, [p.e.id]: 1, [p.r.id]: 1 });
    // get_current_time is offered to all: all re-register.
    await api.setServiceEnabled('get_current_time', false);
    expect(counts).toEqual({ [p.a.id]: 1, [p.x.id]: 2, [p.e.id]: 2, [p.r.id]: 2 });
    await until(() => adventNames().length === 0, 'Advent told it has nothing');

    // Back to everything: the endpoint lists every enabled service again.
    await api.setOffer(p.e.id, null);
    expect(counts[p.e.id]).toBe(3);
    await endpoint.waitForTools((t) =>
      same(
        t.map((x) => x.name),
        builtinsWithout('create_file', 'get_current_time'),
      ),
    );
  });

  it('the gate refuses a server calling a service it was not offered, as unknown: nothing run, audited, the other names not told', async () => {
    const p = await saveAll();
    await api.setOffer(p.a.id, { only: ['get_current_time'] });
    await api.setOffer(p.x.id, { only: ['get_current_time'] });
    await api.setOffer(p.e.id, { except: ['set_timer'] });
    await api.setOffer(p.r.id, { only: ['get_current_time'] });
    await connectAll(p);
    await Promise.all([
      until(() => advent.registrations().length > 0, 'Advent register'),
      xiaozhi.waitForTools(),
      endpoint.waitForTools((t) => t.length > 0),
      robot.waitForRegistration(),
    ]);
    api.attachUi('test');
    let asked = 0;
    api.events.on('prompt', () => (asked += 1));

    const fromAdvent = await advent.peer().call('set_timer', { duration_seconds: 60 });
    expect(fromAdvent).toMatchObject({ success: false });
    expect(String(fromAdvent.error)).toBe(
      "there is no service named 'set_timer'; available services: get_current_time",
    );
    const fromXiaozhi = await xiaozhi.callTool('set_timer', { duration_seconds: 60 });
    expect(fromXiaozhi.code).toBe(-32601);
    const fromEndpoint = await endpoint.callTool('set_timer', { duration_seconds: 60 });
    expect(fromEndpoint.isError).toBe(true);
    const fromRobot = await robot.execute('set_timer', { duration_seconds: 60 });
    expect(fromRobot.error).toBeDefined();
    // What each was given still works.
    expect(await advent.peer().call('get_current_time', {})).toMatchObject({ success: true });

    expect(asked).toBe(0);
    expect(await api.listReminders()).toEqual([]);
    await api.agent.audit.flush();
    const refused = (await api.queryAudit({ order: 'asc', service: 'set_timer' })).records
      .filter((r) => r.decision !== 'duplicate')
      .map((r) => [r.connection, r.decision, r.outcome, r.error]);
    expect(refused).toEqual([
      ['Advent', 'invalid', 'refused', 'unknown_service'],
      ['XiaoZhi', 'invalid', 'refused', 'unknown_service'],
      ['Endpoint', 'invalid', 'refused', 'unknown_service'],
      ['Robot', 'invalid', 'refused', 'unknown_service'],
    ]);
  });

  it('MCP apps (connections mcp:…) share the mcp-clients selection, applied by the same check and the same gate', async () => {
    await api.setOffer(MCP_CLIENTS_OFFER, { only: ['get_current_time'] });
    const agent = api.agent;
    expect(agent.isOffered('mcp:claude-desktop', 'get_current_time')).toBe(true);
    expect(agent.isOffered('mcp:cursor-1', 'set_timer')).toBe(false);
    expect(agent.toolEntriesFor('mcp:cursor-1').map((t) => t.name)).toEqual(['get_current_time']);
    // A profile's own selection is not the MCP apps' one, and the user's own runs see everything.
    expect(agent.isOffered('p-other', 'set_timer')).toBe(true);
    expect(agent.isOffered('local', 'set_timer')).toBe(true);

    const changed = nextEvent(agent.events, 'offerChanged', (e) => e.key === MCP_CLIENTS_OFFER);
    await api.setOffer(MCP_CLIENTS_OFFER, { only: ['get_current_time', 'list_reminders'] });
    await changed;

    const result = await agent.dispatch({
      connection: { id: 'mcp:cursor-1', name: 'Cursor' },
      dialect: 'mcp',
      callId: 'c1',
      service: 'set_timer',
      params: { duration_seconds: 60 },
    });
    expect(result).toMatchObject({ ok: false, code: 'unknown_service' });
    expect(await api.listReminders()).toEqual([]);
    expect((await api.getSettings()).offer).toEqual({
      [MCP_CLIENTS_OFFER]: { only: ['get_current_time', 'list_reminders'] },
    });
  });

  it('is saved and survives a restart; names of services that do not exist are kept; deleting a connection drops its selection', async () => {
    const p = await saveAll();
    await api.setOffer(p.x.id, { only: ['get_current_time', 'weather_gone'] });
    await api.setOffer(p.r.id, { except: ['create_file'] });
    await expect(api.setOffer('p-nobody', { only: [] })).rejects.toMatchObject({
      code: 'unknown_connection',
    });
    const onDisk = JSON.parse(await readFile(path.join(dir, 'data', 'settings.json'), 'utf8')) as {
      offer: unknown;
    };
    expect(onDisk.offer).toEqual({
      [p.x.id]: { only: ['get_current_time', 'weather_gone'] },
      [p.r.id]: { except: ['create_file'] },
    });
    await api.close();
    api = await open();
    expect(api.agent.offerOf(p.x.id)).toEqual({ only: ['get_current_time', 'weather_gone'] });
    // Kept, and ignored: the server is told only what exists.
    expect(api.agent.toolEntriesFor(p.x.id).map((t) => t.name)).toEqual(['get_current_time']);

    await api.deleteConnection(p.x.id);
    expect((await api.getSettings()).offer).toEqual({ [p.r.id]: { except: ['create_file'] } });
    await api.setOffer(p.r.id, null);
    expect(api.agent.getSettings().offer).toBeUndefined();
  });

  it('the schema bounds a selection: names past the limit, names no service could have, or both kinds at once are refused', () => {
    const base = defaultSettings(path.join(os.tmpdir(), 'advent-offer-files'));
    const withOffer = (offer: unknown) => validateSettings({ ...base, offer: { 'p-1': offer } });
    expect(withOffer({ only: ['get_current_time'] }).ok).toBe(true);
    expect(withOffer({ except: [] }).ok).toBe(true);
    const many = Array.from({ length: MAX_OFFER_NAMES + 1 }, (_, i) => `tool_${i}`);
    expect(withOffer({ only: many }).ok).toBe(false);
    expect(withOffer({ only: many.slice(0, MAX_OFFER_NAMES) }).ok).toBe(true);
    expect(withOffer({ only: ['Not A Name'] }).ok).toBe(false);
    expect(withOffer({ only: ['a'.repeat(65)] }).ok).toBe(false);
    expect(withOffer({ only: ['x'], except: ['y'] }).ok).toBe(false);
    expect(withOffer({ only: ['x', 'x'] }).ok).toBe(false);
    expect(withOffer({}).ok).toBe(false);
    const keys = Object.fromEntries(
      Array.from({ length: 501 }, (_, i) => [`p-${i}`, { only: [] }]),
    );
    expect(validateSettings({ ...base, offer: keys }).ok).toBe(false);
  });
});
