import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Agent, type AgentOptions } from '../../app/agent.js';
import type { CallPaceLimits } from '../../app/call-pace.js';
import type { ConnectionState } from '../../app/contract/connection.js';
import { MemorySecretStore } from '../../app/settings/secrets.js';
import type { AdventProfile } from '../../app/settings/schema.js';
import { AdventSim, type AdventSimOptions } from '../../sim/advent/server.js';
import type { Timing } from '../../app/wire/advent/link.js';
import type { AdventSession } from '../../app/wire/advent/session.js';
import { nextEvent } from './wait.js';

/** Fast timing so reconnects and grace periods take milliseconds, not seconds. */
export const FAST: Partial<Timing> = {
  authGraceMs: 30,
  authFailWindowMs: 500,
  backoffInitialMs: 20,
  backoffMaxMs: 200,
  healthyResetMs: 2000,
  disconnectWaitMs: 500,
  connectTimeoutMs: 2000,
};

/**
 * A call pace no test reaches: for tests that push hundreds of calls through one connection on
 * purpose (the pace itself is tested in test/call-pace.test.ts and test/hostile/call-flood.test.ts).
 */
export const UNPACED: CallPaceLimits = { burst: 1_000_000, perSecond: 1_000_000 };

export interface Harness {
  dir: string;
  filesRoot: string;
  dataDir: string;
  sim: AdventSim;
  agent: Agent;
  session: AdventSession;
  states: ConnectionState[];
  /** A state already reached, or the next one that matches. */
  reached(pred: (s: ConnectionState) => boolean, timeoutMs?: number): Promise<ConnectionState>;
  close(): Promise<void>;
}

export async function startHarness(
  opts: {
    sim?: AdventSimOptions;
    agent?: Partial<AgentOptions>;
    profile?: Partial<AdventProfile>;
    token?: string;
    waitReady?: boolean;
  } = {},
): Promise<Harness> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'advent-agent-'));
  const filesRoot = path.join(dir, 'files');
  const dataDir = path.join(dir, 'data');
  const sim = await AdventSim.start({ demo: false, disconnectCloseMs: 10, ...opts.sim });
  const agent = await Agent.open({
    dataDir,
    defaultFilesRoot: filesRoot,
    secrets: new MemorySecretStore(),
    timing: FAST,
    ...opts.agent,
  });
  const states: ConnectionState[] = [];
  agent.events.on('connection', ({ state }) => states.push(state));
  const ready = nextEvent(agent.events, 'connection', (e) => e.state.status === 'ready');
  const session = agent.connectAdvent(
    {
      id: 'p1',
      kind: 'advent',
      name: 'Test server',
      host: '127.0.0.1',
      port: sim.port,
      ...opts.profile,
    },
    () => opts.token ?? 'test-token',
  );
  if (opts.waitReady !== false) await ready;
  else ready.catch(() => undefined);
  return {
    dir,
    filesRoot,
    dataDir,
    sim,
    agent,
    session,
    states,
    async reached(pred, timeoutMs) {
      const seen = states.find(pred);
      if (seen) return seen;
      return (await nextEvent(agent.events, 'connection', (e) => pred(e.state), timeoutMs)).state;
    },
    async close() {
      await agent.close();
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
