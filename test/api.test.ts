import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../app/api.js';
import type { ChatItem } from '../app/contract/chat.js';
import type { ConnectionView, EventPayloads } from '../app/contract/commands.js';
import { MemorySecretStore } from '../app/settings/secrets.js';
import { AdventSim } from '../sim/advent/server.js';
import { FAST } from './helpers/agent-harness.js';
import { voiceLike } from './audio/correlation.js';
import { nextEvent, until } from './helpers/wait.js';
import { startDemoServer } from '../sim/demo-server.js';
import { builtinsWithout } from './helpers/builtins.js';

let dir: string;
let api: CoreApi;
let secrets: MemorySecretStore;
const sims: AdventSim[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-api-'));
  secrets = new MemorySecretStore();
  api = await CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets,
    timing: FAST,
    version: '1.2.3',
    host: 'browser',
    demo: startDemoServer,
  });
});
afterEach(async () => {
  await api.close();
  for (const sim of sims.splice(0)) await sim.stop();
  await rm(dir, { recursive: true, force: true });
});

const ready = (id: string) =>
  nextEvent(api.events, 'connection', (c) => c.profile.id === id && c.state.status === 'ready');

describe('core API', () => {
  it('first run: an empty snapshot, then the demo server works end to end with a timeline', async () => {
    const empty = await api.snapshot();
    expect(empty.connections).toEqual([]);
    expect(empty.version).toBe('1.2.3');
    expect(empty.settings).toMatchObject({
      host: 'browser',
      filesRoots: [path.join(dir, 'files')],
      secrets: { kind: 'memory' },
    });

    const isReady = ready('demo');
    const demo = await api.startDemo();
    expect(demo).toMatchObject({ id: 'demo', demo: true, host: '127.0.0.1', hasToken: true });
    await isReady;

    const chat: ChatItem[] = [];
    api.events.on('chat', (c) => chat.push(c));
    const done = nextEvent(api.events, 'chat', (c) => c.kind === 'assistant' && c.state === 'done');
    await api.sendText('what time is it');
    const reply = await done;
    expect(reply.kind === 'assistant' && reply.text).toMatch(/^It's \d{4}-\d{2}-\d{2}/);
    const items = (await api.snapshot()).chat;
    expect(items.map((i) => i.kind)).toEqual(['user', 'tool', 'assistant']);
    expect(items[1]).toMatchObject({
      kind: 'tool',
      service: 'get_current_time',
      state: 'done',
      decision: 'auto',
      outcome: 'ok',
      connection: 'demo',
    });
    expect(items[2]).toMatchObject({ mood: 'happy' });
  });

  it('streams reply audio as PCM events with the sample rate', async () => {
    await api.startDemo();
    await ready('demo').catch(() => undefined);
    const audio = nextEvent(api.events, 'audio');
    await until(() => api.agent.session('demo')?.state.status === 'ready', 'demo ready');
    await api.sendText('what time is it');
    const a = (await audio) as EventPayloads['audio'];
    expect(a.sampleRate).toBe(16000);
    expect(a.pcm.byteLength % 2).toBe(0);
    expect(a.connection).toBe('demo');
  });

  it('profiles: a kind that needs a token is saved with it, into the secret store; never without', async () => {
    const sim = await AdventSim.start({ demo: true });
    sims.push(sim);
    const input = {
      kind: 'advent' as const,
      name: 'Home server',
      host: '127.0.0.1',
      port: sim.port,
      voiceId: 'Wise Women (zh)',
    };
    // Nothing half-made is saved: the refusal has a stable code the UI translates.
    await expect(api.saveConnection(input)).rejects.toMatchObject({
      code: 'needs_token',
      params: { name: 'Home server' },
    });
    expect((await api.snapshot()).connections).toEqual([]);

    const profile = await api.saveConnection(input, ' tok-abc ');
    expect(profile.id).toMatch(/^p-[0-9a-f]{8}$/);
    expect(profile.hasToken).toBe(true);
    expect(profile.address).toBe(`127.0.0.1:${sim.port}`);
    expect(await secrets.get(`profile:${profile.id}:token`)).toBe('tok-abc');
    // Forgotten later: connecting says what is missing.
    await api.setSecret(profile.id, '');
    await expect(api.connect(profile.id)).rejects.toMatchObject({
      code: 'needs_token',
      message: "no token is saved for 'Home server'; add one first",
    });
    await api.setSecret(profile.id, 'tok-abc');
    const settingsFile = await readFile(path.join(dir, 'data', 'settings.json'), 'utf8');
    expect(settingsFile).toContain('Home server');
    expect(settingsFile).not.toContain('tok-abc');

    const up = ready(profile.id);
    await api.connect(profile.id);
    const view = (await up) as ConnectionView;
    expect(view.active).toBe(true);
    expect(sim.lastAuth()).toEqual({ token: 'tok-abc', params: { voiceid: 'Wise Women (zh)' } });

    await api.deleteConnection(profile.id);
    expect((await api.snapshot()).connections).toEqual([]);
    expect(await secrets.get(`profile:${profile.id}:token`)).toBeUndefined();
  });

  it('several live connections, one active for chat; tool calls name their connection', async () => {
    const simA = await AdventSim.start({ demo: true });
    const simB = await AdventSim.start({ demo: true });
    sims.push(simA, simB);
    const a = await api.saveConnection(
      { kind: 'advent', name: 'A', host: '127.0.0.1', port: simA.port },
      'ta',
    );
    const b = await api.saveConnection(
      { kind: 'advent', name: 'B', host: '127.0.0.1', port: simB.port },
      'tb',
    );
    await api.setSecret(a.id, 'ta');
    await api.setSecret(b.id, 'tb');
    const upA = ready(a.id);
    const upB = ready(b.id);
    await api.connect(a.id);
    await api.connect(b.id);
    await Promise.all([upA, upB]);
    await api.setActiveConnection(b.id);
    const snap = await api.snapshot();
    expect(snap.connections.map((c) => [c.profile.name, c.active])).toEqual([
      ['A', false],
      ['B', true],
    ]);
    await api.sendText('hello');
    await until(() => simB.received.some((f) => f.text === 'hello'), 'text on B');
    expect(simA.received.some((f) => f.text === 'hello')).toBe(false);

    await simA.peer().call('get_current_time', {});
    await api.agent.audit.flush();
    const page = await api.queryAudit({});
    expect(page.records[0]).toMatchObject({ connection: 'A', service: 'get_current_time' });
  });

  it('a switched-off service is re-registered on every live connection', async () => {
    await api.startDemo();
    await until(
      () => api.agent.session('demo')?.registrationState.state === 'registered',
      'registered',
    );
    const reg = nextEvent(
      api.events,
      'connection',
      (c) =>
        c.registration?.state === 'registered' && !c.registration.services.includes('create_file'),
    );
    await api.setServiceEnabled('create_file', false);
    const view = (await reg) as ConnectionView;
    expect(view.registration).toMatchObject({ services: builtinsWithout('create_file') });
  });

  it('runs a service for the user as a user-run, audited as such', async () => {
    const result = await api.runService('create_file', { filename: 'try.txt', content: 'hello' });
    expect(result).toMatchObject({ ok: true });
    expect(await readFile(path.join(dir, 'files', 'try.txt'), 'utf8')).toBe('hello');
    await api.agent.audit.flush();
    expect((await api.queryAudit({})).records[0]).toMatchObject({
      decision: 'user-run',
      connection: 'local',
    });
  });

  it('settings: saved and announced; a relative folder is refused with a clear message', async () => {
    const changed = nextEvent(api.events, 'settings');
    const view = await api.saveSettings({
      language: 'zh-CN',
      promptTimeoutSec: 30,
      filesRoots: [path.join(dir, 'notes')],
    });
    expect(view).toMatchObject({
      language: 'zh-CN',
      promptTimeoutSec: 30,
      filesRoots: [path.join(dir, 'notes')],
    });
    expect(await changed).toMatchObject({ language: 'zh-CN' });
    await expect(api.saveSettings({ filesRoots: ['notes'] })).rejects.toThrow(
      /'notes' is not a full path/,
    );
    expect((await api.getSettings()).filesRoots).toEqual([path.join(dir, 'notes')]);
  });

  it('an "always allow" answer is announced with the services, so it can be revoked at once', async () => {
    await api.startDemo();
    await until(() => api.agent.session('demo')?.state.status === 'ready', 'ready');
    api.attachUi('test');
    api.events.on('prompt', (p) => void api.answerPrompt(p.id, 'always'));
    const services = nextEvent(api.events, 'services', (list) =>
      list.some((s) => s.alwaysGrants.includes('create_file')),
    );
    await api.sendText('write a note: remember me');
    await services;
    await nextEvent(api.events, 'chat', (c) => c.kind === 'assistant' && c.state === 'done');
  });

  it('server STATUS lines go into the conversation quietly, except the VAD "listening started"', async () => {
    await api.startDemo();
    await until(() => api.agent.session('demo')?.state.status === 'ready', 'ready');
    const toasts: string[] = [];
    api.events.on('notice', (n) => toasts.push(n.message));
    const item = nextEvent(
      api.events,
      'chat',
      (c) => c.kind === 'notice' && c.text === '##INFO:maintenance at 3am',
    );
    // The demo server is an AdventSim; reach its connection through the session's peer list.
    const demo = (api as unknown as { demo: { sim: AdventSim } }).demo.sim;
    await demo.peer().status('开始监听');
    await demo.peer().status('##INFO:maintenance at 3am');
    await item;
    const notices = (await api.snapshot()).chat
      .filter((c) => c.kind === 'notice')
      .map((c) => (c.kind === 'notice' ? c.text : ''));
    expect(notices).toEqual(['##INFO:maintenance at 3am']);
    expect(toasts).toEqual([]);
  });

  it('sending with no connection explains what to do', async () => {
    await expect(api.sendText('hi')).rejects.toThrow(
      /no connection is active; connect to a server first/,
    );
  });

  it('a prompt answered through the API lets the call run', async () => {
    await api.startDemo();
    await until(() => api.agent.session('demo')?.state.status === 'ready', 'ready');
    const detach = api.attachUi('test');
    const prompt = nextEvent(api.events, 'prompt');
    await api.sendText('write a note: from the api');
    const p = (await prompt) as EventPayloads['prompt'];
    expect((await api.snapshot()).prompts.map((x) => x.id)).toEqual([p.id]);
    const waiting = (await api.snapshot()).chat.find((c) => c.kind === 'tool');
    expect(waiting).toMatchObject({
      state: 'waiting',
      summary: expect.stringMatching(/^Create file notes/),
    });
    expect(await api.answerPrompt(p.id, 'once')).toBe(true);
    await nextEvent(
      api.events,
      'chat',
      (c) => c.kind === 'tool' && c.state === 'done' && c.outcome === 'ok',
    );
    detach();
  });

  it('a voice turn with the demo: PCM up, a spoken answer down, late chunks refused', async () => {
    await api.startDemo();
    await until(() => api.agent.session('demo')?.state.status === 'ready', 'ready');
    const audio: EventPayloads['audio'][] = [];
    api.events.on('audio', (a) => audio.push(a));
    const done = nextEvent(api.events, 'chat', (c) => c.kind === 'assistant' && c.state === 'done');
    const { taskId } = await api.voiceStart();
    const pcm = voiceLike(600);
    for (let at = 0; at < pcm.length; at += 960) await api.voiceChunk(pcm.subarray(at, at + 960));
    await api.voiceEnd();
    await expect(api.voiceChunk(new Uint8Array(640))).rejects.toThrow(
      `voice turn '${taskId}' was ended; this audio was not sent`,
    );
    const reply = await done;
    expect(reply.kind === 'assistant' && reply.text).toBe('I heard 600 ms of audio.');
    const spoken = audio.filter((a) => a.taskId === taskId);
    expect(spoken.every((a) => a.sampleRate === 16_000)).toBe(true);
    // The demo's spoken reply is about a second of speech-like sound, not a 300 ms beep.
    expect(spoken.reduce((n, a) => n + a.pcm.byteLength, 0)).toBeGreaterThan(16_000 * 2 * 0.8);
    expect((await api.snapshot()).chat[0]).toMatchObject({ kind: 'user', voiceMs: 600 });

    await api.voiceStart();
    await api.voiceCancel();
    await expect(api.voiceChunk(new Uint8Array(640))).rejects.toThrow(/was cancelled/);
  });

  it('hands-free with Opus both ways: LISTEN stop ends the input, the reply is PCM', async () => {
    const sim = await AdventSim.start({ demo: true, vadStopAfterMs: 300, opusLengthOrder: 'le' });
    sims.push(sim);
    const profile = await api.saveConnection(
      {
        kind: 'advent',
        name: 'VAD server',
        host: '127.0.0.1',
        port: sim.port,
        mode: 'vad',
        format: 'opus',
        inputAudioFormat: 'opus',
        opusLengthOrder: 'le',
      },
      'tok',
    );
    const up = ready(profile.id);
    await api.connect(profile.id);
    await up;
    expect(sim.lastAuth()?.params).toMatchObject({
      mode: 'vad',
      format: 'opus',
      input_audio_format: 'opus',
    });
    const audio: EventPayloads['audio'][] = [];
    api.events.on('audio', (a) => audio.push(a));
    const stop = nextEvent(
      api.events,
      'listen',
      (l) => (l.message as { state?: string }).state === 'stop',
    );
    const done = nextEvent(api.events, 'chat', (c) => c.kind === 'assistant' && c.state === 'done');
    const { taskId } = await api.voiceStart();
    const pcm = voiceLike(480);
    for (let at = 0; at < pcm.length; at += 1920) await api.voiceChunk(pcm.subarray(at, at + 1920));
    expect((await stop).taskId).toBe(taskId);
    await api.voiceChunk(new Uint8Array(1920)); // late: ignored, not an error
    const reply = await done;
    expect(reply.kind === 'assistant' && reply.text).toMatch(/^I heard \d+ ms of audio\.$/);
    expect(audio.length).toBeGreaterThan(0);
    expect(audio.every((a) => a.sampleRate === 16_000 && a.pcm.byteLength % 2 === 0)).toBe(true);
    await api.voiceEnd();
    expect((await api.snapshot()).chat.filter((c) => c.kind === 'user')).toHaveLength(1);
    expect(sim.violations).toEqual([]);
  });
});
