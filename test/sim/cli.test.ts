import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { AdventSim } from '../../sim/advent/server.js';
import { type CliIo, isLoopback, main, maskToken } from '../../sim/cli.js';
import { FrameType } from '../../app/wire/advent/frame.js';
import { RawClient } from './raw-client.js';

type TestIo = CliIo & {
  lines: string[];
  errors: string[];
  signals: EventEmitter;
  sim: Promise<AdventSim>;
};

// Whatever a test leaves running is stopped the way a person would: SIGINT.
const running: Array<{ term: TestIo; exit: Promise<number> }> = [];
const clients: RawClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  for (const { term, exit } of running.splice(0)) {
    term.signals.emit('SIGINT');
    await exit;
  }
});

function run(argv: string[]): { term: TestIo; exit: Promise<number> } {
  const term = io();
  const exit = main(argv, term);
  running.push({ term, exit });
  return { term, exit };
}

async function connect(sim: AdventSim): Promise<RawClient> {
  const c = await RawClient.connect(sim.port);
  clients.push(c);
  return c;
}

function io(): TestIo {
  const lines: string[] = [];
  const errors: string[] = [];
  let started!: (sim: AdventSim) => void;
  const sim = new Promise<AdventSim>((resolve) => (started = resolve));
  return {
    lines,
    errors,
    sim,
    signals: new EventEmitter(),
    out: (line) => lines.push(line),
    err: (line) => errors.push(line),
    started: (s) => started(s),
  };
}

describe('advent-sim CLI', () => {
  it('runs the demo on loopback, logs one line per event with the token masked, and stops on SIGINT', async () => {
    const { term, exit } = run(['--port', '0']);
    const sim = await term.sim;
    expect(term.lines[0]).toBe(
      `Advent demo server listening on 127.0.0.1:${sim.port} (any token is accepted)`,
    );
    const c = await connect(sim);
    c.auth('demoTokenSecret.abc', { lang: 'en', format: 'pcm' });
    c.register({ get_current_time: { description: 'time', parameters: { type: 'object' } } });
    c.textTurn('t0000001', 'what time is it');
    const call = await c.waitFrame((f) => f.type === FrameType.MCP);
    const id = (JSON.parse(call.payload.toString()) as { data: { call_id: string } }).data.call_id;
    c.result(id, { success: true, data: '09:15' });
    await c.waitReply('t0000001');
    c.destroy();
    await sim.waitForClose(1);
    const log = term.lines.join('\n');
    expect(log).not.toContain('secret');
    expect(term.lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\[1\] connected from 127\.0\.0\.1:\d+$/),
        '[1] AUTH token demo… lang=en format=pcm → accept',
        '[1] register: get_current_time',
        '[1] turn t0000001: "what time is it"',
        '[1] call call_001 get_current_time {"format":"simple"}',
        '[1] result call_001 ok "09:15"',
        '[1] closed',
      ]),
    );
    term.signals.emit('SIGINT');
    await expect(exit).resolves.toBe(0);
    expect(sim.listening).toBe(false);
    expect(term.signals.listenerCount('SIGINT') + term.signals.listenerCount('SIGTERM')).toBe(0);
  });

  it('rejects every token with --reject and says so', async () => {
    const { term, exit } = run(['--port', '0', '--reject', '##ERROR:invalid token', '--quiet']);
    const sim = await term.sim;
    expect(term.lines).toEqual([
      `Advent demo server listening on 127.0.0.1:${sim.port} (every token is rejected with "##ERROR:invalid token")`,
    ]);
    const c = await connect(sim);
    c.auth();
    await c.waitClose();
    expect(c.frames[0]!.payload.toString()).toBe('##ERROR:invalid token');
    term.signals.emit('SIGTERM');
    await expect(exit).resolves.toBe(0);
  });

  it('warns when asked to bind beyond loopback (and says why it cannot when it cannot)', async () => {
    // 203.0.113.1 is a documentation address no machine here has: the bind fails locally, so the
    // test never listens beyond loopback.
    const a = io();
    await expect(main(['--port', '0', '--host', '203.0.113.1', '--quiet'], a)).resolves.toBe(1);
    expect(a.errors[0]).toMatch(/^warning: listening on 203\.0\.113\.1 lets anyone/);
    expect(a.errors[1]).toMatch(/^advent-sim: cannot listen on 203\.0\.113\.1:0: /);
  });

  it('refuses unknown flags and bad ports with a usage message', async () => {
    const a = io();
    await expect(main(['--bogus'], a)).resolves.toBe(2);
    expect(a.errors.join('\n')).toContain('usage: advent-sim');
    const b = io();
    await expect(main(['--port', '70000'], b)).resolves.toBe(2);
    expect(b.errors[0]).toBe("advent-sim: --port must be 0..65535, got '70000'");
  });

  it('masks tokens and knows loopback', () => {
    expect(maskToken('abcdefghij')).toBe('abcd…');
    expect(maskToken('abc')).toBe('a…');
    expect(maskToken('')).toBe('…');
    expect(['127.0.0.1', '::1', 'localhost'].every(isLoopback)).toBe(true);
    expect(['0.0.0.0', '192.168.1.5', '::'].some(isLoopback)).toBe(false);
  });
});
