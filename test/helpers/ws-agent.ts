/**
 * A real Agent (registry, gate, audit) in a fresh temp dir, for the wire tests that put a session
 * or an MCP server of their own in front of it (robot, XiaoZhi device and endpoint, MCP server),
 * and what those sessions share: fast WebSocket timing, starting, recording their events. The
 * Advent tests have their own harness (agent-harness.ts): there the Agent owns the session.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Agent, type AgentOptions } from '../../app/agent.js';
import { MemorySecretStore } from '../../app/settings/secrets.js';
import type { LiveSession, SessionEvents } from '../../app/wire/session.js';
import type { WsTiming } from '../../app/wire/kit/ws-dialer.js';
import { nextEvent } from './wait.js';

/** Fast reconnects; pings off so nothing but the test's own traffic is on the wire. */
export const FAST_WS: Partial<WsTiming> = {
  backoffInitialMs: 20,
  backoffMaxMs: 200,
  pingIntervalMs: 0,
  closeWaitMs: 500,
};

export interface TempAgent {
  dir: string;
  /** The default files root: `<dir>/files`. */
  filesRoot: string;
  agent: Agent;
  /** Close the agent, then remove the dir. */
  close(): Promise<void>;
}

/** An Agent with its data in `<tmp>/<prefix>…/data` and a memory secret store. */
export async function openTempAgent(
  prefix: string,
  options: Partial<AgentOptions> = {},
): Promise<TempAgent> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  const filesRoot = path.join(dir, 'files');
  const agent = await Agent.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: filesRoot,
    secrets: new MemorySecretStore(),
    ...options,
  });
  return {
    dir,
    filesRoot,
    agent,
    async close() {
      await agent.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Every `name` event the session tells from now on, for assertions after the fact. */
export function recordEvents<K extends keyof SessionEvents>(
  session: LiveSession,
  name: K,
): SessionEvents[K][] {
  const seen: SessionEvents[K][] = [];
  session.events.on(name, (e) => seen.push(e));
  return seen;
}

/** Start `session`; unless `waitReady` is false, resolve once its link is ready. */
export async function startSession(session: LiveSession, waitReady = true): Promise<void> {
  const ready = nextEvent(session.events, 'state', (s) => s.status === 'ready');
  session.start();
  if (waitReady) await ready;
  else ready.catch(() => undefined);
}
