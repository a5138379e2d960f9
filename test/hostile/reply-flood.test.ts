/**
 * A server starting replies on made-up tasks as fast as its socket goes: each used to become an
 * item in every window, a block in the terminal and lines in the log, and to push the user's own
 * turns out of the conversation. Past their pace new tasks are not shown (nothing of them), the
 * user is told once, the connection stays up, and a reply after a quiet spell shows again.
 */
import { describe, expect, it } from 'vitest';
import type { AgentEvents } from '../../app/agent.js';
import { SERVER_TASK_PACE } from '../../app/server-tasks.js';
import { FrameType, encodeFrame } from '../../app/wire/advent/frame.js';
import { floodFor, floodTarget, paceAllows } from './flood.js';
import { sleep, waitFor } from './wire-peers.js';

describe('hostile Advent server: a flood of replies on made-up tasks', () => {
  it('shows a bounded number of them, tells the user once, stays connected, and shows replies again once it slows down', async () => {
    const { agent, session, socket } = await floodTarget(
      'advent-hostile-replies-',
      'talky',
      'Talky',
    );
    const tasks = new Set<string>();
    const notices: AgentEvents['notice'][] = [];
    agent.events.on('replyDelta', (d) => tasks.add(d.taskId));
    agent.events.on('notice', (n) => notices.push(n));

    const { sent, elapsedSec } = await floodFor(socket, 1500, (n) =>
      encodeFrame(FrameType.TEXT, (0x10000000 + n).toString(16), 0, 'hello'),
    );
    await sleep(100);
    expect(sent).toBeGreaterThan(1000);
    expect(tasks.size, `${tasks.size} of ${sent} replies shown`).toBeLessThanOrEqual(
      paceAllows(SERVER_TASK_PACE, elapsedSec + 0.1),
    );
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
