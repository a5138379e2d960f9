/**
 * A hostile Advent server that sends calls and never reads the results (issue 10 item 2: 62 MB of
 * calls → +301 MB in the agent). The agent runs in this process so the test can look at its link:
 * it must stop reading (no new calls are taken) once its unsent results pass the high-water mark,
 * run no more than its calls-in-flight limit meanwhile, and carry on once the server reads again.
 * Each result is 64 KiB, so the write side fills within seconds (a real server's would take hours).
 */
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { Agent } from '../../app/agent.js';
import type { Service } from '../../app/services/service.js';
import { FrameType, encodeFrame } from '../../app/wire/advent/frame.js';
import type { AdventSession } from '../../app/wire/advent/session.js';
import {
  MAX_CALLS_IN_FLIGHT,
  WRITE_HIGH_WATER_BYTES,
  WRITE_MAX_BUFFERED_BYTES,
} from '../../app/wire/kit/bounds.js';
import { FAST, UNPACED } from '../helpers/agent-harness.js';
import { type TempAgent, openTempAgent } from '../helpers/ws-agent.js';
import { HostileAdvent, MiB, sleep, waitFor } from './wire-peers.js';

const RESULT_BYTES = 64 * 1024;
/** How long the server pushes calls without reading. */
const PUSH_MS = 4000;
/**
 * Loopback socket buffers on both sides take some results before the agent's own write buffer
 * fills at all (a few MB here); beyond them and the high-water mark, only the calls in flight run.
 */
const SOCKET_BUFFERS_ALLOWANCE = 16 * MiB;
const MAX_RUNS_WHILE_UNREAD =
  Math.ceil((SOCKET_BUFFERS_ALLOWANCE + WRITE_HIGH_WATER_BYTES) / RESULT_BYTES) +
  MAX_CALLS_IN_FLIGHT;

const bigResult: Service = {
  name: 'big_result',
  title: 'Big result',
  description: 'Answers with 64 KiB of text.',
  parameters: { type: 'object', properties: {} },
  risk: 'read',
  timeoutMs: 5000,
  run: async () => 'r'.repeat(RESULT_BYTES),
};

let server: HostileAdvent | undefined;
let temp: TempAgent | undefined;
afterEach(async () => {
  await temp?.close();
  await server?.close();
  temp = undefined;
  server = undefined;
});

describe('hostile Advent server: a server that never reads', () => {
  it('gets the agent to stop reading and to run only a bounded number of calls, then to carry on once it reads', async () => {
    // Calls held on one socket are bounded: Node must not take them for a leak of listeners.
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    onTestFinished(() => void process.off('warning', onWarning));
    server = await HostileAdvent.start();
    // The calls in flight are bounded by the socket, not by the pace (call-flood.test.ts).
    temp = await openTempAgent('advent-hostile-bp-', {
      services: [bigResult],
      timing: FAST,
      overrides: { callPace: UNPACED },
    });
    const agent: Agent = temp.agent;
    let runs = 0;
    agent.events.on('callFinished', () => (runs += 1));
    const session = agent.connectAdvent(
      { id: 'hostile', kind: 'advent', name: 'Hostile', host: '127.0.0.1', port: server.port },
      () => 'tok',
    );
    const socket = await server.registered(1);
    await waitFor(() => session.state.status === 'ready', 'ready');
    // From now on the server reads nothing.
    socket.pause();
    const batch = (from: number) =>
      Buffer.concat(
        Array.from({ length: 200 }, (_, k) =>
          encodeFrame(
            FrameType.MCP,
            'mcp00001',
            0,
            HostileAdvent.call(`bp${from + k}`, 'big_result'),
          ),
        ),
      );
    const end = Date.now() + PUSH_MS;
    let sent = 0;
    while (Date.now() < end) {
      if (socket.write(batch(sent)))
        await sleep(5); // let the agent read; the loop must not spin
      else
        await Promise.race([
          new Promise((r) => socket.once('drain', r)),
          sleep(Math.max(0, end - Date.now())),
        ]);
      sent += 200;
    }
    const channel = (session as AdventSession).connection.openChannel!;
    expect(session.state.status).toBe('ready');
    expect(channel.pausedBy('writes')).toBe(true);
    expect(channel.bufferedBytes).toBeLessThan(WRITE_MAX_BUFFERED_BYTES);
    expect(channel.inFlight).toBeLessThanOrEqual(MAX_CALLS_IN_FLIGHT);
    expect(runs, `${runs} calls ran of ${sent} sent`).toBeLessThanOrEqual(MAX_RUNS_WHILE_UNREAD);
    // No reading, no new calls: the count stands still.
    const stalled = runs;
    await sleep(500);
    expect(runs - stalled).toBeLessThanOrEqual(MAX_CALLS_IN_FLIGHT);
    // The server reads again: the agent drains, reads on, and answers more.
    socket.resume();
    await waitFor(() => runs >= stalled + 2 * MAX_CALLS_IN_FLIGHT, 'calls to run again', 15_000);
    expect(session.state.status).toBe('ready');
    expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
  });
});
