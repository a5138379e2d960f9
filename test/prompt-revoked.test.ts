/**
 * The user's latest word wins over a question still open: a service switched off, blocked, or no
 * longer offered to the server while its call waits for an answer is not run, even when a "yes"
 * then reaches the old question (from another window, or the terminal). The question leaves
 * every window; the call is refused for the reason the user gave, and recorded so.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreApi } from '../app/api.js';
import type { PendingPrompt } from '../app/contract/policy.js';
import { MemorySecretStore } from '../app/settings/secrets.js';
import { AdventSim } from '../sim/advent/server.js';
import { FAST } from './helpers/agent-harness.js';
import { nextEvent, until } from './helpers/wait.js';

let dir: string;
let api: CoreApi;
let sim: AdventSim;
let profileId: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-revoked-'));
  sim = await AdventSim.start({ demo: false, disconnectCloseMs: 10 });
  api = await CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    timing: FAST,
    version: '1.0.0',
    host: 'browser',
  });
  api.attachUi('test');
  const profile = await api.saveConnection(
    { kind: 'advent', name: 'Home', host: '127.0.0.1', port: sim.port },
    'token',
  );
  profileId = profile.id;
  const ready = nextEvent(
    api.events,
    'connection',
    (c) => c.profile.id === profileId && c.state.status === 'ready',
    10_000,
  );
  await api.connect(profileId);
  await ready;
  await until(() => sim.registrations().length > 0, 'the server to be told its tools');
});

afterEach(async () => {
  await api.close();
  await sim.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A set_timer call from the server, waiting at its question. */
async function waitingCall() {
  const prompt = nextEvent(api.events, 'prompt', (p: PendingPrompt) => p.service === 'set_timer');
  const result = sim.peer().call('set_timer', { duration_seconds: 600 }, { timeoutMs: 10_000 });
  return { prompt: await prompt, result };
}

const pending = () => api.agent.broker.pending().map((p) => p.id);

async function recorded() {
  await api.agent.audit.flush();
  const { records } = await api.queryAudit({ order: 'asc', service: 'set_timer' });
  return records.map((r) => `${r.decision}/${r.outcome}`);
}

describe('a question the user made moot while it waited', () => {
  const changes: [string, () => Promise<void>, RegExp, string][] = [
    [
      'switched off',
      () => api.setServiceEnabled('set_timer', false),
      /switched off by the user/,
      'disabled/refused',
    ],
    [
      'blocked',
      () => api.setServicePolicy('set_timer', 'deny'),
      /blocked the service 'set_timer'/,
      'denied/refused',
    ],
    [
      'no longer offered to this server',
      () => api.setOffer(profileId, { only: ['get_current_time'] }),
      /stopped offering 'set_timer' to this connection/,
      'invalid/refused',
    ],
  ];

  for (const [how, change, said, audit] of changes) {
    it(`${how}: leaves every window, a late yes runs nothing, and the server is told why`, async () => {
      const { prompt, result } = await waitingCall();
      expect(pending()).toContain(prompt.id);
      await change();
      expect(pending()).not.toContain(prompt.id);
      expect(await api.answerPrompt(prompt.id, 'once')).toBe(false);
      const answer = await result;
      expect(answer.success).toBe(false);
      expect(String(answer.error)).toMatch(said);
      expect(await api.listReminders()).toEqual([]);
      expect(await recorded()).toEqual([audit]);
    });
  }

  it('the gate checks again after a yes, whoever answered the question', async () => {
    const { prompt, result } = await waitingCall();
    // Switched off underneath the question (no window was told): the yes still runs nothing.
    api.agent.registry.setEnabled('set_timer', false);
    expect(await api.answerPrompt(prompt.id, 'always')).toBe(true);
    const answer = await result;
    expect(answer.success).toBe(false);
    expect(String(answer.error)).toMatch(/switched off by the user/);
    expect(await api.listReminders()).toEqual([]);
    expect(await recorded()).toEqual(['disabled/refused']);
  });

  it('a question for another service stays open', async () => {
    const { prompt, result } = await waitingCall();
    await api.setServiceEnabled('get_current_time', false);
    expect(pending()).toContain(prompt.id);
    expect(await api.answerPrompt(prompt.id, 'once')).toBe(true);
    expect((await result).success).toBe(true);
    expect(await recorded()).toEqual(['allowed-once/ok']);
  });
});
