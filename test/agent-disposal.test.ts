import { afterEach, describe, expect, it } from 'vitest';
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
