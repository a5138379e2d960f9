/**
 * A server that calls as fast as its socket goes (a prompt-injected model in a loop): every call
 * is recorded and shown, so unpaced it grew the audit log by megabytes a second. With the default
 * pace the agent starts at most its burst and then ten calls a second, stops reading the server
 * while its calls in flight wait their turn, tells the user once, and, when the server goes, the
 * calls still waiting are recorded as cancelled without running.
 */
import { describe, expect, it } from 'vitest';
import type { AgentEvents } from '../../app/agent.js';
import { DEFAULT_CALL_PACE } from '../../app/call-pace.js';
import type { AuditRecord } from '../../app/contract/audit.js';
import { FrameType, encodeFrame } from '../../app/wire/advent/frame.js';
import type { AdventSession } from '../../app/wire/advent/session.js';
import { MAX_CALLS_IN_FLIGHT } from '../../app/wire/kit/bounds.js';
import { floodFor, floodTarget, paceAllows } from './flood.js';
import { HostileAdvent, waitFor } from './wire-peers.js';

/** How long the server floods. */
const FLOOD_MS = 2000;

describe('hostile Advent server: a flood of calls', () => {
  it('is paced: a bounded number run and are recorded, the user is told once, and the rest end cancelled when it goes', async () => {
    const { agent, session, socket } = await floodTarget('advent-hostile-flood-', 'flood', 'Flood');
    const records: AuditRecord[] = [];
    agent.events.on('audit', (r) => records.push(r));
    let startedCalls = 0;
    agent.events.on('callStarted', () => (startedCalls += 1));
    const notices: AgentEvents['notice'][] = [];
    agent.events.on('notice', (n) => notices.push(n));

    const { sent, elapsedSec } = await floodFor(socket, FLOOD_MS, (n) =>
      encodeFrame(FrameType.MCP, 'mcp00001', 0, HostileAdvent.call(`f${n}`, 'get_current_time')),
    );
    const ran = () => records.filter((r) => r.outcome === 'ok').length;
    const allowed = paceAllows(DEFAULT_CALL_PACE, elapsedSec);
    expect(ran(), `${ran()} of ${sent} calls ran in ${elapsedSec} s`).toBeLessThanOrEqual(allowed);
    // It does run them, in their turn: the server is slowed, not shut out.
    expect(ran()).toBeGreaterThanOrEqual(DEFAULT_CALL_PACE.burst);
    // Nothing piles up in the agent: with its calls in flight waiting, the socket is not read.
    const channel = (session as AdventSession).connection.openChannel!;
    expect(channel.pausedBy('calls')).toBe(true);
    expect(channel.inFlight).toBeLessThanOrEqual(MAX_CALLS_IN_FLIGHT);
    // Told once, in the connection's name.
    const paced = notices.filter((n) => /faster than 10 a second/.test(n.message));
    expect(paced).toHaveLength(1);
    expect(paced[0]).toMatchObject({ level: 'warn', connection: { id: 'flood' } });
    expect(paced[0]!.message).toContain("'Flood'");
    // …and in words a window shows translated.
    expect(paced[0]!.words).toEqual({
      key: 'notice.callsPaced',
      params: { server: 'Flood', ...DEFAULT_CALL_PACE },
    });

    // The server goes: what waited its turn is recorded as cancelled and never runs.
    const startedBefore = startedCalls;
    // Those running or waiting their turn, and those read in the last chunk before reading stopped.
    const held = channel.inFlight + channel.waiting;
    socket.destroy();
    await waitFor(() => channel.inFlight === 0, 'the waiting calls to end');
    await waitFor(
      () => records.filter((r) => r.outcome === 'cancelled').length >= 1,
      'the cancelled calls to be recorded',
    );
    const cancelled = records.filter((r) => r.outcome === 'cancelled');
    expect(cancelled.length).toBeLessThanOrEqual(held);
    expect(cancelled.every((r) => r.service === 'get_current_time')).toBe(true);
    // Not reading its socket, the agent learns the server went when a result cannot be written:
    // the first write after the server's FIN draws its RST, the second fails.
    expect(ran()).toBeLessThanOrEqual(startedBefore + 2);
    expect(records.length).toBeLessThanOrEqual(allowed + 1 + held);
  });
});
