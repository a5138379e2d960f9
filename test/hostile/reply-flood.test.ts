/**
 * A server starting replies on made-up tasks as fast as its socket goes: each used to become an
 * item in every window, a block in the terminal and lines in the log, and to push the user's own
 * turns out of the conversation. Past their pace new tasks are not shown (nothing of them), the
 * user is told once, the connection stays up, and a reply after a quiet spell shows again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, AgentEvents } from '../../app/agent.js';
import { SERVER_TASK_PACE } from '../../app/server-tasks.js';
import { FrameType, encodeFrame } from '../../app/wire/advent/frame.js';
import { FAST } from '../helpers/agent-harness.js';
import { type TempAgent, openTempAgent } from '../helpers/ws-agent.js';
import { HostileAdvent, sleep, waitFor } from './wire-peers.js';

const FLOOD_MS = 1500;

let server: HostileAdvent | undefined;
let temp: TempAgent | undefined;
afterEach(async () => {
  await temp?.close();
  await server?.close();
  temp = undefined;
  server = undefined;
});

describe('hostile Advent server: a flood of replies on made-up tasks', () => {
  it('shows a bounded number of them, tells the user once, stays connected, and shows replies again once it slows down', async () => {
    server = await HostileAdvent.start();
    temp = await openTempAgent('advent-hostile-replies-', { timing: FAST });
    const agent: Agent = temp.agent;
    const tasks = new Set<string>();
    const notices: AgentEvents['notice'][] = [];
    agent.events.on('replyDelta', (d) => tasks.add(d.taskId));
    agent.events.on('notice', (n) => notices.push(n));
    const session = agent.connectAdvent(
      { id: 'talky', kind: 'advent', name: 'Talky', host: '127.0.0.1', port: server.port },
      () => 'tok',
    );
    const socket = await server.registered(1);
    await waitFor(() => session.state.status === 'ready', 'ready');

    const started = Date.now();
    let sent = 0;
    while (Date.now() - started < FLOOD_MS) {
      const batch = Buffer.concat(
        Array.from({ length: 100 }, (_, k) =>
          encodeFrame(FrameType.TEXT, (0x10000000 + sent + k).toString(16), 0, 'hello'),
        ),
      );
      sent += 100;
      if (!socket.write(batch)) await new Promise((r) => socket.once('drain', r));
      else await sleep(2);
    }
    await sleep(100);
    const elapsedSec = (Date.now() - started) / 1000;
    const allowed = SERVER_TASK_PACE.burst + Math.ceil(SERVER_TASK_PACE.perSecond * elapsedSec) + 1;
    expect(sent).toBeGreaterThan(1000);
    expect(tasks.size, `${tasks.size} of ${sent} replies shown`).toBeLessThanOrEqual(allowed);
    expect(tasks.size).toBeGreaterThanOrEqual(SERVER_TASK_PACE.burst);
    const told = notices.filter((n) => n.words?.key === 'notice.repliesHidden');
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ level: 'warn', connection: { id: 'talky', name: 'Talky' } });
    expect(session.state.status).toBe('ready');

    // Quiet for as long as a burst takes to refill: the next reply shows.
    await sleep((SERVER_TASK_PACE.burst / SERVER_TASK_PACE.perSecond) * 1000 + 200);
    socket.write(encodeFrame(FrameType.TEXT, 'feedf00d', 0, 'back to normal'));
    await waitFor(() => tasks.has('feedf00d'), 'the next reply');
  });
});
