/**
 * Whose reply audio reaches the window: the connection the user talks to, and a reminder's
 * speech by the connection that set it. A background server's own audio would otherwise cut off
 * the active one's answer in the page's player and speak in its place.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../app/api.js';
import { MemorySecretStore } from '../app/settings/secrets.js';
import { FrameType } from '../app/wire/advent/frame.js';
import { AdventSim } from '../sim/advent/server.js';
import { FAST } from './helpers/agent-harness.js';
import { nextEvent, until } from './helpers/wait.js';

let dir: string;
const apis: CoreApi[] = [];
const stops: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-audio-'));
});
afterEach(async () => {
  for (const api of apis.splice(0)) await api.close();
  for (const stop of stops.splice(0)) await stop();
  await rm(dir, { recursive: true, force: true });
});

async function openApi(): Promise<CoreApi> {
  const api = await CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    timing: FAST,
    version: '1.0.0',
    host: 'browser',
  });
  apis.push(api);
  return api;
}

async function connectAdvent(api: CoreApi, name: string): Promise<{ sim: AdventSim; id: string }> {
  const sim = await AdventSim.start({ demo: false, disconnectCloseMs: 10 });
  stops.push(() => sim.stop());
  const p = await api.saveConnection(
    { kind: 'advent', name, host: '127.0.0.1', port: sim.port },
    'token',
  );
  const ready = nextEvent(
    api.events,
    'connection',
    (c) => c.profile.id === p.id && c.state.status === 'ready',
  );
  await api.connect(p.id);
  await ready;
  return { sim, id: p.id };
}

describe('whose audio the window hears', () => {
  /** Two Advent servers; `a` is the one the user talks to. */
  async function twoServers() {
    const api = await openApi();
    const a = await connectAdvent(api, 'A');
    const b = await connectAdvent(api, 'B');
    await api.setActiveConnection(a.id);
    const heard: string[] = [];
    api.events.on(
      'audio',
      (ev) => void heard.push(`${ev.connection === a.id ? 'a' : 'b'}:${ev.taskId}`),
    );
    return { api, a, b, heard };
  }
  const pcm = Buffer.alloc(1280, 1);

  it("the active connection's; a background server pushing audio is not heard", async () => {
    const { a, b, heard } = await twoServers();
    await b.sim.peer().audio('b0b0b0b0', pcm);
    await a.sim.peer().audio('a1a1a1a1', pcm);
    await until(() => heard.includes('a:a1a1a1a1'), "the active server's audio");
    expect(heard.filter((h) => h.startsWith('b:'))).toEqual([]);
  });

  it('a reminder spoken by the background server that set it is heard', async () => {
    const { api, b, heard } = await twoServers();
    api.attachUi('test');
    api.events.on('prompt', (prompt) => void api.answerPrompt(prompt.id, 'once'));
    expect(
      await b.sim.peer().call('set_timer', { duration_seconds: 1, label: 'stretch' }),
    ).toMatchObject({ success: true });
    const speak = await b.sim.waitFor((f) => f.type === FrameType.SPEAK, 5000);
    await b.sim.peer().audio(speak.taskId, pcm);
    await until(() => heard.includes(`b:${speak.taskId}`), 'the reminder heard');
  });
});
