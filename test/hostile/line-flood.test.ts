/**
 * A server sending status lines and broken frames as fast as its socket goes: each one used to
 * become a conversation item in every window, a terminal line and a log line. Past their pace
 * they are dropped, the user is told once in the connection's name, the connection stays up, and
 * once the server slows down its lines show again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Agent, AgentEvents } from '../../app/agent.js';
import { SERVER_LINE_PACE } from '../../app/call-pace.js';
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

describe('hostile Advent server: a flood of status lines and broken frames', () => {
  it('shows a bounded number, tells the user once, stays connected, and shows lines again once it slows down', async () => {
    server = await HostileAdvent.start();
    temp = await openTempAgent('advent-hostile-lines-', { timing: FAST });
    const agent: Agent = temp.agent;
    const statuses: AgentEvents['status'][] = [];
    const notices: AgentEvents['notice'][] = [];
    agent.events.on('status', (s) => statuses.push(s));
    agent.events.on('notice', (n) => notices.push(n));
    const session = agent.connectAdvent(
      { id: 'chatty', kind: 'advent', name: 'Chatty', host: '127.0.0.1', port: server.port },
      () => 'tok',
    );
    const socket = await server.registered(1);
    await waitFor(() => session.state.status === 'ready', 'ready');
    const before = statuses.length + notices.length;

    const started = Date.now();
    let sent = 0;
    while (Date.now() - started < FLOOD_MS) {
      const batch = Buffer.concat(
        Array.from({ length: 100 }, (_, k) =>
          k % 2
            ? encodeFrame(FrameType.STATUS, 'task0001', 0, `still thinking ${sent + k}`)
            : // An MCP frame that is not JSON: the session says so on each one.
              encodeFrame(FrameType.MCP, 'mcp00001', 0, `{not json ${sent + k}`),
        ),
      );
      sent += 100;
      if (!socket.write(batch)) await new Promise((r) => socket.once('drain', r));
      else await sleep(2);
    }
    await sleep(100);
    const elapsedSec = (Date.now() - started) / 1000;
    const shown = statuses.length + notices.filter((n) => n.kind === 'protocol').length - before;
    const allowed = SERVER_LINE_PACE.burst + Math.ceil(SERVER_LINE_PACE.perSecond * elapsedSec) + 1;
    expect(sent).toBeGreaterThan(1000);
    expect(shown, `${shown} of ${sent} lines shown in ${elapsedSec} s`).toBeLessThanOrEqual(
      allowed,
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
