/**
 * A hostile Advent server flooding an in-process agent: the connection both flood tests start
 * from, and the flood itself. Everything opened is closed when the test finishes.
 */
import type net from 'node:net';
import { onTestFinished } from 'vitest';
import type { Agent } from '../../app/agent.js';
import type { CallPaceLimits } from '../../app/call-pace.js';
import type { LiveSession } from '../../app/wire/session.js';
import { FAST } from '../helpers/agent-harness.js';
import { openTempAgent } from '../helpers/ws-agent.js';
import { HostileAdvent, sleep, waitFor } from './wire-peers.js';

export interface FloodTarget {
  server: HostileAdvent;
  agent: Agent;
  session: LiveSession;
  /** The server's side of the connection, once the agent has logged in and registered. */
  socket: net.Socket;
}

/** An agent (its own temp folder) connected as `name` to a fresh hostile server, ready. */
export async function floodTarget(prefix: string, id: string, name: string): Promise<FloodTarget> {
  const server = await HostileAdvent.start();
  onTestFinished(() => server.close());
  const temp = await openTempAgent(prefix, { timing: FAST });
  onTestFinished(() => temp.close());
  const { agent } = temp;
  const session = agent.connectAdvent(
    { id, kind: 'advent', name, host: '127.0.0.1', port: server.port },
    () => 'tok',
  );
  const socket = await server.registered(1);
  await waitFor(() => session.state.status === 'ready', 'ready');
  return { server, agent, session, socket };
}

/**
 * Write 100 frames at a time, `frame(n)` the n-th, for `ms`. While the socket's buffer is full it
 * waits for it to drain, but at most 50 ms: an agent that stopped reading never drains it.
 */
export async function floodFor(
  socket: net.Socket,
  ms: number,
  frame: (n: number) => Buffer,
): Promise<{ sent: number; elapsedSec: number }> {
  const started = Date.now();
  let sent = 0;
  while (Date.now() - started < ms) {
    const batch = Buffer.concat(Array.from({ length: 100 }, (_, k) => frame(sent + k)));
    sent += 100;
    if (!socket.write(batch))
      await Promise.race([new Promise((r) => socket.once('drain', r)), sleep(50)]);
    else await sleep(2);
  }
  return { sent, elapsedSec: (Date.now() - started) / 1000 };
}

/** The most a pace lets through in `elapsedSec` (its burst, its rate, one for the edge). */
export function paceAllows(limits: CallPaceLimits, elapsedSec: number): number {
  return limits.burst + Math.ceil(limits.perSecond * elapsedSec) + 1;
}
