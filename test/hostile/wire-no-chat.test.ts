/**
 * `advent-agent run --no-chat` is a service: it must reconnect forever until stopped (issue 10
 * item 3). It used to exit with code 13 about a second after the server dropped it, silently:
 * every timer is unref'd, so nothing kept Node alive while it waited to dial again. Here the
 * server drops it five times; each time the agent stays up and comes back. The child's timers
 * run five times faster (wire-timescale.mjs) so the five backoff periods (1 + 2 + 4 + 8 + 16 s)
 * fit the time budget; the process, its sockets and its code are the real ones.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdventSim } from '../../sim/advent/server.js';
import { type AgentChild, requireBuild, sleep, spawnAgent, waitFor } from './wire-peers.js';

const DROPS = 5;

let sim: AdventSim | undefined;
let agent: AgentChild | undefined;

beforeAll(() => requireBuild());

afterEach(async () => {
  await agent?.stop();
  await sim?.stop();
  agent = undefined;
  sim = undefined;
});

describe('run --no-chat: a service reconnects forever', () => {
  it(`stays up through ${DROPS} server drops and reconnects every time; SIGTERM ends it cleanly`, async () => {
    // The welcome STATUS ends the login at once: a drop after it is an outage, not a refusal.
    sim = await AdventSim.start({ demo: false, disconnectCloseMs: 10, welcome: '##INFO:welcome' });
    const s = sim;
    agent = await spawnAgent(s.port, { timeScale: 5 });
    const a = agent;
    const registered = (n: number) => () => s.registrations(n).length > 0;
    for (let n = 1; n <= DROPS; n++) {
      await waitFor(registered(n), `registration on connection ${n}`, 15_000);
      await sleep(300);
      await s.peer(n).drop();
      // The old agent was gone about a second later (here: a fifth of that).
      await sleep(400);
      expect(a.exitCode, `exited after drop ${n}: ${a.stderr()}`).toBeNull();
    }
    await waitFor(registered(DROPS + 1), 'the connection after the last drop', 15_000);
    expect(a.exitCode).toBeNull();
    expect(s.violations).toEqual([]);
    // A stopped agent does not linger: it says goodbye and exits.
    expect(await a.stop()).toBe(0);
  });
});
