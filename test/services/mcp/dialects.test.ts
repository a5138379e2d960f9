/**
 * Imported MCP tools at every kind of voice server at once (Advent, XiaoZhi device, XiaoZhi MCP
 * endpoint, robot — the simulators over loopback, one CoreApi): offered with schemas each
 * server accepts, called through each dialect with the prompt and the audit log, and re-offered
 * everywhere when the MCP server's tool list changes. The MCP servers are real: the fixture and
 * `@modelcontextprotocol/server-everything` (real schemas, annotations, list_changed at start).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../../../app/api.js';
import type { ProfileView } from '../../../app/contract/commands.js';
import type { McpServerView } from '../../../app/contract/mcp.js';
import { MemorySecretStore } from '../../../app/settings/secrets.js';
import type { WsTiming } from '../../../app/wire/kit/ws-dialer.js';
import { AdventSim } from '../../../sim/advent/server.js';
import { EndpointSim } from '../../../sim/endpoint/server.js';
import { RobotSim } from '../../../sim/robot/server.js';
import { XiaozhiSim } from '../../../sim/xiaozhi/server.js';
import { FAST } from '../../helpers/agent-harness.js';
import { nextEvent, until } from '../../helpers/wait.js';
import { FAST_MCP, fixtureEntry, serverBin } from './helpers.js';

const WS_FAST: Partial<WsTiming> = {
  backoffInitialMs: 20,
  backoffMaxMs: 200,
  closeWaitMs: 200,
  healthyResetMs: 2000,
};
const ENDPOINT_TOKEN = ['ep', 'token', 'value'].join('-');

let dir: string;
let api: CoreApi;
let advent: AdventSim;
let xiaozhi: XiaozhiSim;
let endpoint: EndpointSim;
let robot: RobotSim;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-mcp-dialects-'));
  [advent, xiaozhi, endpoint, robot] = await Promise.all([
    AdventSim.start({ demo: false, disconnectCloseMs: 10 }),
    XiaozhiSim.start({ demo: false }),
    EndpointSim.start({ token: ENDPOINT_TOKEN }),
    RobotSim.start({}),
  ]);
  api = await CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    timing: FAST,
    wsTiming: WS_FAST,
    version: '9.9.9',
    host: 'browser',
    mcp: { timing: FAST_MCP },
  });
});
afterEach(async () => {
  await api.close();
  await Promise.all([advent.stop(), xiaozhi.stop(), endpoint.stop(), robot.stop()]);
  await rm(dir, { recursive: true, force: true });
});

async function connectAll(): Promise<ProfileView[]> {
  const a = await api.saveConnection(
    { kind: 'advent', name: 'Advent', host: '127.0.0.1', port: advent.port },
    'advent-token',
  );
  const x = await api.saveConnection({ kind: 'xiaozhi', name: 'XiaoZhi', url: xiaozhi.url });
  const e = await api.saveConnection({ kind: 'endpoint', name: 'Endpoint', url: endpoint.url });
  const r = await api.saveConnection({ kind: 'robot', name: 'Robot', url: robot.url });
  const profiles = [a, x, e, r];
  const readyAll = profiles.map((p) =>
    nextEvent(
      api.events,
      'connection',
      (c) => c.profile.id === p.id && c.state.status === 'ready',
      10_000,
    ),
  );
  for (const p of profiles) await api.connect(p.id);
  await Promise.all(readyAll);
  return profiles;
}

/** Paste a Claude-style snippet and confirm it, as the MCP page does. */
async function paste(mcpServers: Record<string, unknown>): Promise<void> {
  const preview = await api.previewMcpImport({ json: JSON.stringify({ mcpServers }) });
  await api.confirmMcpImport(
    preview.id,
    preview.servers.map((s) => s.name),
  );
}

async function whenReady(name: string, pred: (v: McpServerView) => boolean = () => true) {
  const ok = (v: McpServerView) => v.name === name && v.state.status === 'ready' && pred(v);
  const now = (await api.listMcpServers()).find(ok);
  return now ?? nextEvent(api.events, 'mcpServer', ok, 20_000);
}

/** Names every server currently offers. */
function offered() {
  return {
    advent: Object.keys(advent.registrations().at(-1) ?? {}),
    xiaozhi: xiaozhi.tools.map((t) => t.name),
    endpoint: endpoint.tools.map((t) => t.name),
    robot: (robot.registrations.at(-1)?.tools ?? []).map((t) => String(t.name)),
  };
}

const ajv = new Ajv({ strict: false });

describe('imported MCP tools at every voice server', () => {
  it('offers every tool of two real servers to all four with schemas each accepts', async () => {
    await connectAll();
    await paste({
      fixture: fixtureEntry(),
      everything: {
        command: process.execPath,
        args: [serverBin('@modelcontextprotocol/server-everything')],
      },
    });
    await whenReady('fixture');
    const every = await whenReady('everything', (v) => v.tools.some((t) => t.tool === 'get-sum'));
    const everyNames = every.tools.flatMap((t) => (t.service ? [t.service] : []));
    expect(everyNames).toEqual(expect.arrayContaining(['everything_echo', 'everything_get_sum']));
    const wanted = ['fixture_add', 'fixture_structured', ...everyNames];

    await until(
      () => Object.values(offered()).every((names) => wanted.every((n) => names.includes(n))),
      'every server to be offered the imported tools',
      20_000,
    );
    // The Advent simulator checks every register against the documented schema rules.
    expect(advent.violations).toEqual([]);
    const schemas = [
      ...xiaozhi.tools.map((t) => t.inputSchema),
      ...endpoint.tools.map((t) => t.inputSchema),
      ...(robot.registrations.at(-1)?.tools ?? []).map((t) => t.parameters),
      ...Object.values(advent.registrations().at(-1) ?? {}).map(
        (s) => (s as { parameters: unknown }).parameters,
      ),
    ];
    for (const schema of schemas) {
      expect(schema).toMatchObject({ type: 'object' });
      expect(ajv.validateSchema(schema as object)).toBe(true);
      expect(JSON.stringify(schema)).not.toMatch(/"\$(ref|schema|defs)"/);
    }
    // `["string", "null"]` is shown to servers as the plain type.
    const structured = endpoint.tools.find((t) => t.name === 'fixture_structured')!;
    expect(structured.inputSchema).toEqual({
      type: 'object',
      properties: { city: { type: 'string' } },
      required: [],
    });
  });

  it('a call through each dialect is asked, runs on the MCP server and is audited under the server, tool and connection', async () => {
    await connectAll();
    await paste({ fixture: fixtureEntry() });
    await whenReady('fixture');
    await until(
      () => Object.values(offered()).every((names) => names.includes('fixture_add')),
      'fixture_add at every server',
      20_000,
    );
    const detach = api.attachUi('test');
    const asked: string[] = [];
    api.events.on('prompt', (p) => {
      asked.push(`${p.connection.name}:${p.service}:${p.hint?.server ?? '-'}`);
      void api.answerPrompt(p.id, p.connection.name === 'Robot' ? 'deny' : 'once');
    });
    const [a, x, e, r] = await Promise.all([
      advent.peer().call('fixture_add', { a: 1, b: 2 }),
      xiaozhi.callTool('fixture_add', { a: 3, b: 4 }),
      endpoint.callTool('fixture_add', { a: 5, b: 6 }),
      robot.execute('fixture_add', { a: 7, b: 8 }),
    ]);
    detach();
    expect(asked.sort()).toEqual([
      'Advent:fixture_add:fixture',
      'Endpoint:fixture_add:fixture',
      'Robot:fixture_add:fixture',
      'XiaoZhi:fixture_add:fixture',
    ]);
    expect(a).toMatchObject({ success: true, data: '3' });
    expect(x).toMatchObject({ isError: false, text: '7' });
    expect(e).toMatchObject({ isError: false, text: '11' });
    expect(r.error?.message).toMatch(/declined/);

    const audit = await api.queryAudit({ service: 'fixture_add', order: 'asc' });
    expect(
      audit.records
        .map((rec) => [rec.connection, rec.service, rec.decision, rec.outcome].join(' '))
        .sort(),
    ).toEqual([
      'Advent fixture_add allowed-once ok',
      'Endpoint fixture_add allowed-once ok',
      'Robot fixture_add denied refused',
      'Robot fixture_add duplicate refused',
      'XiaoZhi fixture_add allowed-once ok',
    ]);
    expect((await api.verifyAudit()).ok).toBe(true);
  });

  it('when the MCP server lists new tools, every voice server is offered them, each the way its dialect does it', async () => {
    await connectAll();
    await paste({ fixture: fixtureEntry() });
    await whenReady('fixture');
    await until(
      () => Object.values(offered()).every((names) => names.includes('fixture_grow')),
      'fixture_grow at every server',
      20_000,
    );
    const listChanged = endpoint.listChangedCount;
    const adventRegisters = advent.registrations().length;
    const runs = await api.runService('fixture_grow', {});
    expect(runs).toMatchObject({ ok: true, data: 'now 11 tools' });
    await until(
      () => Object.values(offered()).every((names) => names.includes('fixture_extra_1')),
      'fixture_extra_1 at every server',
      20_000,
    );
    expect(endpoint.listChangedCount).toBeGreaterThan(listChanged);
    // One re-list is one register for Advent, not one per tool.
    expect(advent.registrations().length).toBe(adventRegisters + 1);
    const view = await whenReady(
      'fixture',
      (v) => v.state.status === 'ready' && v.state.tools === 11,
    );
    expect(view.tools.find((t) => t.tool === 'extra_1')?.service).toBe('fixture_extra_1');
  });
});
