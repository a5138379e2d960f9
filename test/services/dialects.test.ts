/**
 * The desktop services through every dialect's simulator at once (Advent, XiaoZhi device, XiaoZhi
 * MCP endpoint, robot): the same gate, the same refusals, each call in the audit log under its
 * own connection. Platform commands go to a recorder; the clipboard is an injected store (no
 * display here); the installed apps are a temp XDG folder.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../../app/api.js';
import type { ClipboardStore } from '../../app/services/platform/desktop.js';
import { MemorySecretStore } from '../../app/settings/secrets.js';
import { AdventSim } from '../../sim/advent/server.js';
import { EndpointSim } from '../../sim/endpoint/server.js';
import { RobotSim } from '../../sim/robot/server.js';
import { XiaozhiSim } from '../../sim/xiaozhi/server.js';
import { FAST } from '../helpers/agent-harness.js';
import { nextEvent, until } from '../helpers/wait.js';
import { FAST_WS } from '../helpers/ws-agent.js';
import { RecordingRunner } from './platform/recorder.js';

let dir: string;
let api: CoreApi;
let runner: RecordingRunner;
let advent: AdventSim;
let xiaozhi: XiaozhiSim;
let endpoint: EndpointSim;
let robot: RobotSim;
const clipboard: ClipboardStore & { text: string } = {
  text: '',
  async readText() {
    return clipboard.text;
  },
  async writeText(t) {
    clipboard.text = t;
  },
};

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-dialects-'));
  const apps = path.join(dir, 'xdg', 'applications');
  await mkdir(apps, { recursive: true });
  await writeFile(
    path.join(apps, 'org.example.Calc.desktop'),
    '[Desktop Entry]\nType=Application\nName=Calculator\nExec=example-calc %U\n',
  );
  runner = new RecordingRunner();
  [advent, xiaozhi, endpoint, robot] = await Promise.all([
    AdventSim.start({ demo: false, disconnectCloseMs: 10 }),
    XiaozhiSim.start({ demo: false }),
    EndpointSim.start({ token: 'ep-token' }),
    RobotSim.start({}),
  ]);
  api = await CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    timing: FAST,
    wsTiming: FAST_WS,
    version: '1.0.0',
    host: 'electron',
    desktop: {
      platform: 'linux',
      runner,
      env: { XDG_DATA_HOME: path.join(dir, 'xdg'), XDG_DATA_DIRS: path.join(dir, 'none') },
      clipboard,
    },
  });
});
afterEach(async () => {
  await api.close();
  await Promise.all([advent.stop(), xiaozhi.stop(), endpoint.stop(), robot.stop()]);
  await rm(dir, { recursive: true, force: true });
});

async function connectAll(): Promise<void> {
  const a = await api.saveConnection(
    {
      kind: 'advent',
      name: 'Advent',
      host: '127.0.0.1',
      port: advent.port,
    },
    'token',
  );
  const x = await api.saveConnection({ kind: 'xiaozhi', name: 'XiaoZhi', url: xiaozhi.url });
  const e = await api.saveConnection({ kind: 'endpoint', name: 'Endpoint', url: endpoint.url });
  const r = await api.saveConnection({ kind: 'robot', name: 'Robot', url: robot.url });
  const ready = [a, x, e, r].map((p) =>
    nextEvent(
      api.events,
      'connection',
      (c) => c.profile.id === p.id && c.state.status === 'ready',
      10_000,
    ),
  );
  for (const p of [a, x, e, r]) await api.connect(p.id);
  await Promise.all(ready);
  await Promise.all([
    until(() => advent.registrations().length > 0, 'Advent register'),
    xiaozhi.waitForTools(),
    endpoint.waitForTools((t) => t.some((tool) => tool.name === 'open_url')),
    robot.waitForRegistration(),
  ]);
}

describe('desktop services through every dialect', () => {
  it('each server uses them through the one gate: asked first, run, and audited under its own name', async () => {
    await connectAll();
    api.attachUi('test');
    const asked: string[] = [];
    api.events.on('prompt', (p) => {
      asked.push(`${p.connection.name}: ${p.summary}`);
      void api.answerPrompt(p.id, 'once');
    });

    const opened = await advent.peer().call('open_url', { url: 'example.com' });
    expect(opened).toMatchObject({ success: true });
    expect(runner.calls).toEqual([
      { kind: 'launch', cmd: 'xdg-open', args: ['https://example.com/'] },
    ]);

    const copied = await xiaozhi.callTool('write_clipboard', { text: 'from XiaoZhi' });
    expect(copied.isError).toBe(false);
    const read = await endpoint.callTool('read_clipboard', {});
    expect(JSON.parse(read.text)).toEqual({ text: 'from XiaoZhi' });

    const timer = await robot.execute('set_timer', { duration_seconds: 600, label: 'robot tea' });
    expect(timer.error).toBeUndefined();
    // The server that set it lists it; another server does not see it.
    const own = await robot.execute('list_reminders', {});
    expect(JSON.stringify(own.result)).toMatch(/robot tea/);
    const listed = await advent.peer().call('list_reminders', {});
    expect(listed).toMatchObject({ success: true, data: { reminders: [] } });

    const app = await endpoint.callTool('open_app', { id: 'org.example.Calc' });
    expect(app.isError).toBe(false);
    expect(runner.calls.at(-1)).toEqual({ kind: 'launch', cmd: 'example-calc', args: [] });

    const status = await xiaozhi.callTool('get_device_status', {});
    expect(Object.keys(JSON.parse(status.text) as object).sort()).toEqual([
      'battery',
      'locale',
      'network',
      'os',
      'timeZone',
      'volume',
    ]);

    expect(asked.sort()).toEqual([
      'Advent: Open https://example.com/ in your web browser',
      'Endpoint: Open the app “Calculator” (org.example.Calc): runs example-calc',
      'Endpoint: Send the text on your clipboard to Endpoint',
      'Robot: Set a timer for 10 minutes: “robot tea”',
      'XiaoZhi: Replace your clipboard with “from XiaoZhi” (12 characters)',
    ]);
    await api.agent.audit.flush();
    const rows = (await api.queryAudit({ order: 'asc' })).records
      .filter((r) => r.decision !== 'duplicate')
      .map((r) => [r.connection, r.dialect, r.service, r.decision, r.outcome]);
    expect(rows).toEqual([
      ['Advent', 'advent', 'open_url', 'allowed-once', 'ok'],
      ['XiaoZhi', 'xiaozhi', 'write_clipboard', 'allowed-once', 'ok'],
      ['Endpoint', 'endpoint', 'read_clipboard', 'allowed-once', 'ok'],
      ['Robot', 'robot', 'set_timer', 'allowed-once', 'ok'],
      ['Robot', 'robot', 'list_reminders', 'auto', 'ok'],
      ['Advent', 'advent', 'list_reminders', 'auto', 'ok'],
      ['Endpoint', 'endpoint', 'open_app', 'allowed-once', 'ok'],
      ['XiaoZhi', 'xiaozhi', 'get_device_status', 'auto', 'ok'],
    ]);
  });

  it('refusals reach each dialect in its own shape, nothing run and nobody asked', async () => {
    await connectAll();
    api.attachUi('test');
    let asked = 0;
    api.events.on('prompt', () => (asked += 1));
    const bad = { url: 'file:///etc/passwd' };
    const why =
      "'file:' addresses are not opened; only http:// and https:// web addresses can be opened";
    expect(await advent.peer().call('open_url', bad)).toMatchObject({ success: false, error: why });
    expect(await xiaozhi.callTool('open_url', bad)).toMatchObject({ isError: true, text: why });
    expect(await endpoint.callTool('open_app', { id: 'rm -rf /' })).toMatchObject({
      isError: true,
      text: "no installed app has the id 'rm -rf /'; call list_apps to see the ids",
    });
    const r = await robot.execute('cancel_reminder', { id: 'r-00000000' });
    expect(r.error).toMatchObject({ code: -32002 });
    expect(r.error?.message).toMatch(/no reminder or timer with the id 'r-00000000'/);
    expect(asked).toBe(0);
    expect(runner.calls).toEqual([]);
  });
});
