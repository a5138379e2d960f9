import { mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, type Socket, createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../app/agent.js';
import { MemorySecretStore } from '../app/settings/secrets.js';
import type { AdventProfile } from '../app/contract/profiles/index.js';
import type { AdventSession } from '../app/wire/advent/session.js';
import { type Harness, startHarness } from './helpers/agent-harness.js';
import { nextEvent, until } from './helpers/wait.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('Agent: connections leave nothing behind', () => {
  it('connect and disconnect 100 times: listener counts stay flat, no timer, socket or hold left', async () => {
    h = await startHarness();
    await h.agent.disconnect('p1');
    const agentListeners = h.agent.events.totalListeners;
    const sessions: AdventSession[] = [];
    for (let i = 0; i < 100; i++) {
      // Every tenth round waits for the login; the others stop while still connecting.
      const ready =
        i % 10 === 0
          ? nextEvent(h.agent.events, 'connection', (e) => e.state.status === 'ready')
          : undefined;
      const session = h.agent.connectAdvent(
        { id: 'p1', kind: 'advent', name: 'Test server', host: '127.0.0.1', port: h.sim.port },
        () => 'test-token',
      );
      sessions.push(session);
      await ready;
      await h.agent.disconnect('p1');
      expect(h.agent.events.totalListeners).toBe(agentListeners);
    }
    expect(sessions.map((s) => s.events.totalListeners)).toEqual(sessions.map(() => 0));
    expect(sessions.every((s) => s.connection.pendingTimers === 0)).toBe(true);
    expect(sessions.every((s) => s.connection.liveSockets === 0)).toBe(true);
    expect(sessions.every((s) => !s.connection.holdsProcess)).toBe(true);
    await until(() => h!.sim.openConnections === 0, 'the server to see every socket closed');
  });

  it('still tells hosts the last state of a session it disconnects', async () => {
    h = await startHarness();
    const last = nextEvent(h.agent.events, 'connection', (e) => e.state.status === 'offline');
    await h.agent.disconnect('p1');
    expect((await last).state).toMatchObject({ status: 'offline', reason: 'stopped' });
  });
});

describe('Agent: connecting again while the last session still says goodbye', () => {
  it("the new session's events reach hosts once the old goodbye ends, and the old one's last state does not", async () => {
    // A server that reads and never answers: the old session's stop waits out its goodbye.
    const sockets: Socket[] = [];
    const server = createServer((s) => {
      s.on('error', () => undefined);
      sockets.push(s);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const dir = await mkdtemp(path.join(os.tmpdir(), 'advent-regoodbye-'));
    const agent = await Agent.open({
      dataDir: path.join(dir, 'data'),
      defaultFilesRoot: path.join(dir, 'files'),
      secrets: new MemorySecretStore(),
      timing: { authGraceMs: 20, backoffInitialMs: 20, backoffMaxMs: 100, disconnectWaitMs: 400 },
    });
    try {
      const profile = { id: 'p1', kind: 'advent', name: 'Slow goodbye', host: '127.0.0.1', port };
      agent.connectAdvent(profile as AdventProfile, () => 'test-token');
      await until(() => agent.session('p1')?.state.status === 'ready', 'the first login');
      const goodbye = agent.disconnect('p1');
      const second = agent.connectAdvent(profile as AdventProfile, () => 'test-token');
      await until(() => second.state.status === 'ready', 'the second login');
      const states: string[] = [];
      agent.events.on('connection', (e) => void states.push(e.state.status));
      await goodbye;
      // The old session ended offline; hosts hear nothing of it now that p1 is the new session.
      expect(states).not.toContain('offline');
      // The server drops the new session's socket: hosts hear it reconnect.
      sockets.at(-1)?.destroy();
      await until(() => states.includes('reconnecting'), "the new session's state reaching hosts");
      expect(agent.session('p1')).toBe(second);
    } finally {
      await agent.close();
      for (const s of sockets) s.destroy();
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
