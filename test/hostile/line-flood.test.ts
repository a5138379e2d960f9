/**
 * A server sending status lines and broken frames as fast as its socket goes: each one used to
 * become a conversation item in every window, a terminal line and a log line. Past their pace
 * they are dropped, the user is told once in the connection's name, the connection stays up, and
 * once the server slows down its lines show again.
 */
import { describe, expect, it } from 'vitest';
import type { AgentEvents } from '../../app/agent.js';
import { SERVER_LINE_PACE } from '../../app/call-pace.js';
import { FrameType, encodeFrame } from '../../app/wire/advent/frame.js';
import { floodFor, floodTarget, paceAllows } from './flood.js';
import { sleep, waitFor } from './wire-peers.js';

describe('hostile Advent server: a flood of status lines and broken frames', () => {
  it('shows a bounded number, tells the user once, stays connected, and shows lines again once it slows down', async () => {
    const { agent, session, socket } = await floodTarget(
      'advent-hostile-lines-',
      'chatty',
      'Chatty',
    );
    const statuses: AgentEvents['status'][] = [];
    const notices: AgentEvents['notice'][] = [];
    agent.events.on('status', (s) => statuses.push(s));
    agent.events.on('notice', (n) => notices.push(n));

    const { sent, elapsedSec } = await floodFor(socket, 1500, (n) =>
      n % 2
        ? encodeFrame(FrameType.STATUS, 'task0001', 0, `still thinking ${n}`)
        : // An MCP frame that is not JSON: the session says so on each one.
          encodeFrame(FrameType.MCP, 'mcp00001', 0, `{not json ${n}`),
    );
    await sleep(100);
    const shown = statuses.length + notices.filter((n) => n.kind === 'protocol').length;
    expect(sent).toBeGreaterThan(1000);
    expect(shown, `${shown} of ${sent} lines shown in ${elapsedSec} s`).toBeLessThanOrEqual(
      paceAllows(SERVER_LINE_PACE, elapsedSec + 0.1),
    );
    expect(shown).toBeGreaterThanOrEqual(SERVER_LINE_PACE.burst);
    const told = notices.filter((n) => n.words?.key === 'notice.linesHidden');
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ level: 'warn', connection: { id: 'chatty', name: 'Chatty' } });
    expect(told[0]!.words).toEqual({
      key: 'notice.linesHidden',
      params: { server: 'Chatty', perSecond: SERVER_LINE_PACE.perSecond },
    });
    expect(session.state.status).toBe('ready');

    // Quiet for as long as a burst takes to refill: its next line shows.
    await sleep((SERVER_LINE_PACE.burst / SERVER_LINE_PACE.perSecond) * 1000 + 200);
    socket.write(encodeFrame(FrameType.STATUS, 'task0002', 0, 'back to normal'));
    await waitFor(() => statuses.some((s) => s.text === 'back to normal'), 'the next line');
  });
});
