/**
 * One deadline per call (issue 14 item 1): a server that stops waiting for a call takes its
 * question back. The prompt is withdrawn from every window, a late "allow" does nothing, nothing
 * runs, no answer is sent for the withdrawn request, and the audit log says the call was
 * cancelled. Each dialect's own way: MCP `notifications/cancelled` (XiaoZhi device, MCP
 * endpoint, robot), and for Advent, whose protocol has no cancel, the connection ending.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../app/api.js';
import type { ChatItem } from '../app/contract/chat.js';
import type { EventPayloads, ProfileView } from '../app/contract/commands.js';
import { MemorySecretStore } from '../app/settings/secrets.js';
import type { WsTiming } from '../app/wire/kit/ws-dialer.js';
import { AdventSim } from '../sim/advent/server.js';
import { EndpointSim } from '../sim/endpoint/server.js';
import { RobotSim } from '../sim/robot/server.js';
import { XiaozhiSim } from '../sim/xiaozhi/server.js';
import { demoServerFactory } from '../sim/demo-server.js';
import { FAST } from './helpers/agent-harness.js';
import { FakeClock } from './helpers/fake-clock.js';
import { nextEvent, until } from './helpers/wait.js';

const WS_FAST: Partial<WsTiming> = {
  backoffInitialMs: 20,
  backoffMaxMs: 200,
  closeWaitMs: 200,
  healthyResetMs: 2000,
};
const ENDPOINT_TOKEN = ['ep', 'secret', 'value'].join('-');
/** How long the simulated servers wait for a call (on their own fake clock). */
const SERVER_WAIT_MS = 1000;

let dir: string;
let api: CoreApi;
let detachUi: () => void;
const stops: Array<() => Promise<void>> = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-deadline-'));
  api = await CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    timing: FAST,
    wsTiming: WS_FAST,
    version: '1.0.0',
    host: 'browser',
  });
  detachUi = api.attachUi('test');
});
afterEach(async () => {
  detachUi();
  await api.close();
  for (const stop of stops.splice(0)) await stop();
  await rm(dir, { recursive: true, force: true });
});

async function connect(profile: ProfileView): Promise<void> {
  const ready = nextEvent(
    api.events,
    'connection',
    (c) => c.profile.id === profile.id && c.state.status === 'ready',
    10_000,
  );
  await api.connect(profile.id);
  await ready;
}

const NOTE = { filename: 'withdrawn.txt', content: 'never written' };

/**
 * The prompt for `create_file` is up; `giveUp` makes the server stop waiting. Then: the prompt is
 * withdrawn (not timed out, not "no window"), a late allow is a harmless no-op, the file is never
 * written, the card says the server withdrew the call, and the audit row says cancelled.
 */
async function expectWithdrawn(
  start: () => Promise<unknown>,
  giveUp: () => Promise<void> | void,
): Promise<void> {
  const prompt = nextEvent(api.events, 'prompt', (p) => p.service === 'create_file');
  const chat: ChatItem[] = [];
  api.events.on('chat', (c) => chat.push(c));
  const call = start().catch((err: unknown) => err);
  const p = (await prompt) as EventPayloads['prompt'];
  const resolved = nextEvent(api.events, 'promptResolved', (r) => r.id === p.id);
  // (The robot's id-less twin of the call is recorded too, as a duplicate.)
  const audited = nextEvent(
    api.events,
    'audit',
    (r) => r.service === 'create_file' && r.decision !== 'duplicate',
  );

  await giveUp();

  expect(await resolved).toEqual({ id: p.id, resolution: 'withdrawn' });
  expect((await api.snapshot()).prompts).toEqual([]);
  const record = await audited;
  expect(record).toMatchObject({ decision: 'withdrawn', outcome: 'cancelled', error: 'cancelled' });
  expect(await api.answerPrompt(p.id, 'once')).toBe(false);
  await call;
  await expect(readFile(path.join(dir, 'files', NOTE.filename))).rejects.toThrow();
  const card = (await api.snapshot()).chat.find(
    (c): c is Extract<ChatItem, { kind: 'tool' }> =>
      c.kind === 'tool' && c.service === 'create_file',
  );
  expect(card).toMatchObject({ state: 'done', decision: 'withdrawn', outcome: 'cancelled' });
  const page = await api.queryAudit({ service: 'create_file' });
  expect(page.records.map((r) => [r.decision, r.outcome])).toContainEqual([
    'withdrawn',
    'cancelled',
  ]);
  expect(page.records.every((r) => r.outcome !== 'ok')).toBe(true);
  expect((await api.verifyAudit()).ok).toBe(true);
}

describe('a server that stops waiting takes its question back', () => {
  it('XiaoZhi device: notifications/cancelled withdraws the prompt, and no reply is sent', async () => {
    const clock = new FakeClock(Date.now());
    const sim = await XiaozhiSim.start({ demo: false, clock, callTimeoutMs: SERVER_WAIT_MS });
    stops.push(() => sim.stop());
    const profile = await api.saveConnection({ kind: 'xiaozhi', name: 'XiaoZhi', url: sim.url });
    await connect(profile);
    await sim.waitForTools();

    await expectWithdrawn(
      () => sim.callTool('create_file', NOTE),
      () => clock.advance(SERVER_WAIT_MS),
    );
    // A reply to the cancelled id would be "a reply for id …, which was never asked".
    await new Promise((r) => setTimeout(r, 50));
    expect(sim.violations).toEqual([]);
  });

  it('MCP endpoint: notifications/cancelled withdraws the prompt, and no reply is sent', async () => {
    const clock = new FakeClock(Date.now());
    const sim = await EndpointSim.start({
      token: ENDPOINT_TOKEN,
      clock,
      callTimeoutMs: SERVER_WAIT_MS,
    });
    stops.push(() => sim.stop());
    const profile = await api.saveConnection({ kind: 'endpoint', name: 'Endpoint', url: sim.url });
    await connect(profile);
    await sim.waitForTools((t) => t.length > 0);

    await expectWithdrawn(
      () => sim.callTool('create_file', NOTE),
      () => clock.advance(SERVER_WAIT_MS),
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(sim.violations).toEqual([]);
  });

  it('robot: notifications/cancelled for the execute id withdraws the prompt, no response is sent', async () => {
    const clock = new FakeClock(Date.now());
    const sim = await RobotSim.start({ clock, executeTimeoutMs: SERVER_WAIT_MS });
    stops.push(() => sim.stop());
    const profile = await api.saveConnection({ kind: 'robot', name: 'Robot', url: sim.url });
    await connect(profile);
    await sim.waitForRegistration();

    await expectWithdrawn(
      () => sim.execute('create_file', NOTE),
      () => clock.advance(SERVER_WAIT_MS),
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(sim.violations).toEqual([]);
  });

  it('Advent (no cancel in the protocol): the connection dropping withdraws the prompt', async () => {
    const sim = await AdventSim.start({ demo: false, disconnectCloseMs: 10 });
    stops.push(() => sim.stop());
    const profile = await api.saveConnection(
      { kind: 'advent', name: 'Advent', host: '127.0.0.1', port: sim.port },
      'advent-token',
    );
    await connect(profile);
    await until(() => sim.registrations().length > 0, 'register');
    const peer = sim.peer();

    await expectWithdrawn(
      () => peer.call('create_file', NOTE),
      () => peer.drop(),
    );
    // The link comes back; the withdrawn call still never runs.
    await until(() => sim.connections >= 2, 'reconnect');
    await expect(readFile(path.join(dir, 'files', NOTE.filename))).rejects.toThrow();
  });

  it('a disconnect by the user withdraws its prompts; an allow afterwards runs nothing', async () => {
    const sim = await AdventSim.start({ demo: false, disconnectCloseMs: 10 });
    stops.push(() => sim.stop());
    const profile = await api.saveConnection(
      { kind: 'advent', name: 'Advent', host: '127.0.0.1', port: sim.port },
      'advent-token',
    );
    await connect(profile);
    await until(() => sim.registrations().length > 0, 'register');
    const peer = sim.peer();

    await expectWithdrawn(
      () => peer.call('create_file', NOTE),
      () => api.disconnect(profile.id),
    );
  });
});

describe('the demo server waits as long as the prompt does', () => {
  async function openDemo(clock: FakeClock): Promise<CoreApi> {
    const demoApi = await CoreApi.open({
      dataDir: path.join(dir, 'demo-data'),
      defaultFilesRoot: path.join(dir, 'files'),
      secrets: new MemorySecretStore(),
      timing: FAST,
      version: '1.0.0',
      host: 'browser',
      demo: demoServerFactory({ clock }),
    });
    stops.push(() => demoApi.close());
    const detach = demoApi.attachUi('test');
    stops.push(async () => detach());
    const ready = nextEvent(
      demoApi.events,
      'connection',
      (c) => c.profile.id === 'demo' && c.state.status === 'ready',
    );
    await demoApi.startDemo();
    await ready;
    return demoApi;
  }

  /** Ask for a note, let `waitMs` pass on the demo's clock, answer, and return the reply. */
  async function noteAfter(
    demoApi: CoreApi,
    clock: FakeClock,
    waitMs: number,
    answer: 'once' | 'deny',
  ): Promise<string> {
    const replies = async () =>
      (await demoApi.snapshot()).chat.filter((c) => c.kind === 'assistant').length;
    const before = await replies();
    const prompt = nextEvent(demoApi.events, 'prompt');
    await demoApi.sendText('write a note: answered late');
    const p = (await prompt) as EventPayloads['prompt'];
    clock.advance(waitMs);
    // Time for a demo that gave up to say so before the answer comes.
    await new Promise((r) => setTimeout(r, 100));
    expect(await replies()).toBe(before);
    const done = nextEvent(
      demoApi.events,
      'chat',
      (c) => c.kind === 'assistant' && c.state === 'done',
    );
    expect(await demoApi.answerPrompt(p.id, answer)).toBe(true);
    const reply = await done;
    return reply.kind === 'assistant' ? reply.text : '';
  }

  it('allowed 11 s in (past the old 10 s window): the note is saved and the demo says so', async () => {
    const clock = new FakeClock(Date.now());
    const demoApi = await openDemo(clock);
    const text = await noteAfter(demoApi, clock, 11_000, 'once');
    expect(text).toMatch(/^Saved it as notes\/note-\d{8}-\d{6}\.txt\.$/);
    const file = text.replace(/^Saved it as /, '').replace(/\.$/, '');
    expect(await readFile(path.join(dir, 'files', file), 'utf8')).toBe('answered late');
  });

  it('is told the prompt timeout: with 120 s set, an answer after 100 s still counts', async () => {
    const clock = new FakeClock(Date.now());
    const demoApi = await openDemo(clock);
    await demoApi.saveSettings({ promptTimeoutSec: 120 });
    const text = await noteAfter(demoApi, clock, 100_000, 'once');
    expect(text).toMatch(/^Saved it as notes\//);
  });

  it('a refusal is said like a person, in the app language, never the sentence for the model', async () => {
    const clock = new FakeClock(Date.now());
    const demoApi = await openDemo(clock);
    const en = await noteAfter(demoApi, clock, 0, 'deny');
    expect(en).toBe("You said no, so I didn't save the note.");
    await demoApi.saveSettings({ language: 'zh-CN' });
    const zh = await noteAfter(demoApi, clock, 0, 'deny');
    expect(zh).toBe('你没有同意，所以我没有保存这条笔记。');
    for (const text of [en, zh]) expect(text).not.toMatch(/retry|declined|create_file/);
  });
});
