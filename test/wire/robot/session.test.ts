import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { Agent, AgentOptions } from '../../../app/agent.js';
import type { AuditRecord } from '../../../app/contract/audit.js';
import type { ConnectionState, RegistrationState } from '../../../app/contract/connection.js';
import type { Service } from '../../../app/services/service.js';
import { RobotSim, type RobotSimOptions } from '../../../sim/robot/server.js';
import { sineTone } from '../../../sim/kit/tone.js';
import type { Gate, SessionEvents } from '../../../app/wire/session.js';
import { MAX_CALLS_IN_FLIGHT, MAX_STATUS_CHARS } from '../../../app/wire/kit/bounds.js';
import { RobotSession, type RobotSessionOptions } from '../../../app/wire/robot/session.js';
import type { WsTiming } from '../../../app/wire/kit/ws-dialer.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { nextEvent, until } from '../../helpers/wait.js';
import { FAST_WS, openTempAgent, recordEvents, startSession } from '../../helpers/ws-agent.js';
import { BUILTIN_NAMES, builtinsWithout } from '../../helpers/builtins.js';
import { UNPACED } from '../../helpers/agent-harness.js';

const FAST: Partial<WsTiming> = { ...FAST_WS, connectTimeoutMs: 2000 };

interface Harness {
  dir: string;
  filesRoot: string;
  sim: RobotSim;
  agent: Agent;
  session: RobotSession;
  /** Every counter-service run, with its params. */
  runs: unknown[];
  audit: AuditRecord[];
  logs: SessionEvents['log'][];
  states: ConnectionState[];
  registrations: RegistrationState[];
  record<K extends keyof SessionEvents>(name: K): SessionEvents[K][];
  close(): Promise<void>;
}

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A write-class service that counts its runs, so "ran once" is something we can count. */
function counterService(runs: unknown[]): Service {
  return {
    name: 'bump_counter',
    title: 'Bump counter',
    description: 'Add one to a counter',
    parameters: { type: 'object', properties: { by: { type: 'integer' } } },
    risk: 'write',
    timeoutMs: 5000,
    run: async (params) => {
      runs.push(params);
      return { count: runs.length };
    },
  };
}

async function start(
  opts: {
    sim?: RobotSimOptions;
    agent?: Partial<AgentOptions>;
    session?: Partial<RobotSessionOptions>;
    waitReady?: boolean;
  } = {},
): Promise<Harness> {
  const runs: unknown[] = [];
  const sim = await RobotSim.start({ demo: false, ...opts.sim });
  const temp = await openTempAgent('robot-session-', {
    services: [counterService(runs)],
    ...opts.agent,
  });
  const { dir, filesRoot, agent } = temp;
  const audit: AuditRecord[] = [];
  agent.events.on('audit', (r) => audit.push(r));
  const session = new RobotSession({
    id: 'p-robot',
    name: 'Robot',
    url: sim.url,
    macAddr: 'aa:bb:cc:dd:ee:0f',
    gate: agent.gate,
    tools: () => agent.toolEntries(),
    timing: FAST,
    ...opts.session,
  });
  // The lead wires this in Agent; here the test stands in for it.
  const offChanged = agent.registry.events.on('changed', () => session.reregister());
  const logs = recordEvents(session, 'log');
  const states = recordEvents(session, 'state');
  const registrations = recordEvents(session, 'registration');
  await startSession(session, opts.waitReady !== false);
  const harness: Harness = {
    dir,
    filesRoot,
    sim,
    agent,
    session,
    runs,
    audit,
    logs,
    states,
    registrations,
    record: (name) => recordEvents(session, name),
    async close() {
      offChanged();
      await session.stop();
      await temp.close();
      await sim.stop();
    },
  };
  return harness;
}

const registered = (h: Harness) =>
  until(() => h.session.registrationState.state === 'registered', 'registration acked');

/** Answer every permission prompt with `answer`, as a user at the window would. */
function answerPrompts(h: Harness, answer: 'once' | 'deny'): string[] {
  const asked: string[] = [];
  h.agent.broker.attach({ name: 'test' });
  h.agent.events.on('prompt', (p) => {
    asked.push(p.service);
    h.agent.answerPrompt(p.id, answer);
  });
  return asked;
}

describe('Robot session: registration', () => {
  it('registers every server-visible service on connect, with the MAC normalised and create_file as query', async () => {
    h = await start();
    const reg = await h.sim.waitForRegistration();
    expect(reg.macAddr).toBe('AA-BB-CC-DD-EE-0F');
    expect(typeof reg.id).toBe('string');
    expect(reg.tools.map((t) => t.name).sort()).toEqual([...BUILTIN_NAMES, 'bump_counter'].sort());
    const createFile = reg.tools.find((t) => t.name === 'create_file')!;
    expect(createFile).toMatchObject({ main_type: 'remote', sub_type: 'query' });
    expect((createFile.parameters as { type: string }).type).toBe('object');
    expect(reg.tools.every((t) => t.sub_type === 'query')).toBe(true);
    await registered(h);
    expect(h.session.registrationState).toMatchObject({
      state: 'registered',
      services: expect.arrayContaining(['create_file', 'get_current_time', 'bump_counter']),
    });
    expect(h.registrations.map((r) => r.state)).toEqual(['registering', 'registered']);
    expect(h.sim.violations).toEqual([]);
  });

  it('accepts the server code’s ack shape: no jsonrpc member, status "success"', async () => {
    h = await start({ sim: { ackShape: 'success' } });
    await registered(h);
    expect(h.sim.violations).toEqual([]);
  });

  it('shows the server’s message when it refuses the registration', async () => {
    h = await start({ sim: { ackError: 'device is banned' } });
    await until(() => h!.session.registrationState.state === 'failed', 'failed registration');
    expect(h.session.registrationState).toEqual({
      state: 'failed',
      message: 'the server refused the registration: device is banned',
    });
    expect(h.session.state.status).toBe('ready');
  });

  it('shows a bounded start of a huge refusal of the registration', async () => {
    h = await start({ sim: { ackError: `device is banned ${'b'.repeat(1_000_000)}` } });
    await until(() => h!.session.registrationState.state === 'failed', 'failed registration');
    const state = h.session.registrationState;
    const message = state.state === 'failed' ? state.message : '';
    expect(message).toMatch(/^the server refused the registration: device is banned bbb/);
    expect(message.length).toBeLessThan(MAX_STATUS_CHARS + 100);
  });

  it('marks the registration failed without an ack, keeps the link, and still answers calls', async () => {
    h = await start({ sim: { noAck: true }, session: { ackTimeoutMs: 100 } });
    await until(() => h!.session.registrationState.state === 'failed', 'ack timeout');
    const failed = h.session.registrationState;
    expect(failed.state === 'failed' && failed.message).toMatch(
      /the server did not acknowledge the service registration/,
    );
    expect(h.session.state.status).toBe('ready');
    const out = await h.sim.execute('get_current_time', { format: 'simple' });
    expect(typeof out.result).toBe('string');
  });

  it('registers the whole list again when a service is switched off, and again after a reconnect', async () => {
    h = await start();
    await h.sim.waitForRegistration();
    await registered(h);
    await h.agent.setServiceEnabled('create_file', false);
    const second = await h.sim.waitForRegistration((r) => r !== h!.sim.registrations[0]);
    expect(second.tools.map((t) => t.name).sort()).toEqual(
      [...builtinsWithout('create_file'), 'bump_counter'].sort(),
    );
    expect(second.id).not.toBe(h.sim.registrations[0]!.id);
    await registered(h);

    h.sim.dropConnections();
    const third = await h.sim.waitForRegistration((r) => r.conn === 2);
    expect(third.tools.map((t) => t.name).sort()).toEqual(
      [...builtinsWithout('create_file'), 'bump_counter'].sort(),
    );
    expect(third.macAddr).toBe('AA-BB-CC-DD-EE-0F');
    expect(h.states.some((s) => s.status === 'reconnecting')).toBe(true);
    await registered(h);
    expect(h.sim.violations).toEqual([]);
  });

  it('refuses to connect with a setting that is not a MAC address, and says why', async () => {
    h = await start({ session: { macAddr: 'not-a-mac' }, waitReady: false });
    await until(() => h!.session.state.status === 'offline', 'offline');
    expect(h.session.state).toMatchObject({ status: 'offline', reason: 'config' });
    expect(h.session.state.status === 'offline' && h.session.state.message).toMatch(
      /'not-a-mac' is not a MAC address/,
    );
    expect(h.sim.connections).toBe(0);
  });
});

describe('Robot session: tool calls', () => {
  it('runs an allowed call once and answers its id once with the service’s data', async () => {
    h = await start({ agent: { overrides: { policies: { bump_counter: 'allow' } } } });
    await registered(h);
    const out = await h.sim.execute('bump_counter', { by: 2 });
    expect(out).toEqual({ result: { count: 1 } });
    await until(() => h!.audit.length === 2, 'two audit records');
    expect(h.runs).toEqual([{ by: 2 }]);
    expect(h.sim.responses).toHaveLength(1);
    expect(h.sim.violations).toEqual([]);
  });

  it('answers a denied call with one error in -32000…-32099 carrying the refusal', async () => {
    h = await start();
    const asked = answerPrompts(h, 'deny');
    await registered(h);
    const out = await h.sim.execute('create_file', { filename: 'a.txt', content: 'hi' });
    expect(asked).toEqual(['create_file']);
    expect(out.error?.code).toBe(-32003);
    expect(out.error?.message).toMatch(/the user declined to let 'create_file' run/);
    expect(existsSync(path.join(h.filesRoot, 'a.txt'))).toBe(false);
    await until(() => h!.audit.length === 2, 'two audit records');
    expect(h.audit.map((r) => r.decision).sort()).toEqual(['denied', 'duplicate']);
    expect(h.sim.violations).toEqual([]);
  });

  it('answers an unknown tool with -32001 naming the services there are', async () => {
    h = await start();
    await registered(h);
    const out = await h.sim.execute('launch_rocket', {});
    expect(out.error?.code).toBe(-32001);
    expect(out.error?.message).toMatch(/there is no service named 'launch_rocket'/);
    expect(out.error?.message).toMatch(/get_current_time/);
    expect(h.sim.violations).toEqual([]);
  });

  it('answers an execute without a tool_name with -32002, and an id-less one not at all', async () => {
    h = await start();
    await registered(h);
    const conn = h.sim.conn();
    conn.sendJson({ jsonrpc: '2.0', method: 'mcp/tool/execute', params: { tool_input: {} } });
    const bad = await conn.execute('', {}, { duplicate: false });
    expect(bad.error?.code).toBe(-32002);
    expect(bad.error?.message).toMatch(/tool_name/);
    expect(h.sim.responses).toHaveLength(1);
    expect(h.sim.violations).toEqual([]);
    expect(h.logs.filter((l) => /malformed mcp\/tool\/execute/.test(l.message))).toHaveLength(2);
  });

  it('lets go of each call when it ends: a long-lived socket collects nothing per execute', async () => {
    // Each execute listens for its socket's end while it runs; one left behind per execute grew
    // the socket's memory with every call and, past 256, put a leak warning in the user's log.
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    onTestFinished(() => void process.off('warning', onWarning));
    // 300 executes (600 with their twins) as fast as they go: what one leaves behind is tested.
    h = await start({ agent: { overrides: { callPace: UNPACED } } });
    await registered(h);
    for (let i = 0; i < 300; i++) {
      const out = await h.sim.execute('get_current_time', { format: 'simple' });
      expect(out.result).toBeDefined();
    }
    // Warnings are emitted on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    expect(h.sim.violations).toEqual([]);
  });

  it('echoes a number id as a number', async () => {
    h = await start({ sim: { numericIds: true } });
    await registered(h);
    const out = await h.sim.execute('get_current_time', {});
    expect(out.result).toBeDefined();
    expect(typeof h.sim.responses[0]!.id).toBe('number');
    expect(h.sim.violations).toEqual([]);
  });

  it.each(['id-first', 'idless-first'] as const)(
    'runs a call the server sends twice (%s) once: one run, one duplicate record, one answer',
    async (order) => {
      h = await start({
        sim: { duplicateOrder: order },
        agent: { overrides: { policies: { bump_counter: 'allow' } } },
      });
      await registered(h);
      const out = await h.sim.execute('bump_counter', { by: 1 });
      expect(out).toEqual({ result: { count: 1 } });
      await until(() => h!.audit.length === 2, 'two audit records');
      // Nothing more arrives: a late second run would show up here.
      await new Promise((r) => setTimeout(r, 50));
      expect(h.runs).toHaveLength(1);
      expect(h.audit.map((r) => r.decision).sort()).toEqual(['auto', 'duplicate']);
      const dup = h.audit.find((r) => r.decision === 'duplicate')!;
      expect(dup).toMatchObject({ dialect: 'robot', connection: 'Robot', outcome: 'refused' });
      expect(h.sim.responses).toHaveLength(1);
      expect(h.sim.violations).toEqual([]);
    },
  );

  it.each(['id-first', 'idless-first'] as const)(
    'writes the file once when create_file comes twice (%s) and the user allows it once',
    async (order) => {
      h = await start({ sim: { duplicateOrder: order } });
      const asked = answerPrompts(h, 'once');
      await registered(h);
      const out = await h.sim.execute('create_file', { filename: 'notes/x.txt', content: 'one' });
      expect(asked).toEqual(['create_file']);
      expect((out.result as { message: string }).message).toMatch(/notes\/x\.txt/);
      expect(await readFile(path.join(h.filesRoot, 'notes', 'x.txt'), 'utf8')).toBe('one');
      expect(await readdir(path.join(h.filesRoot, 'notes'))).toEqual(['x.txt']);
      await until(() => h!.audit.length === 2, 'two audit records');
      expect(h.audit.map((r) => r.decision).sort()).toEqual(['allowed-once', 'duplicate']);
      expect(h.audit.filter((r) => r.outcome === 'ok')).toHaveLength(1);
      expect(h.sim.responses).toHaveLength(1);
      expect(h.sim.violations).toEqual([]);
    },
  );

  it('runs two genuine identical calls once each (both sent in pairs)', async () => {
    h = await start({ agent: { overrides: { policies: { bump_counter: 'allow' } } } });
    await registered(h);
    expect(await h.sim.execute('bump_counter', { by: 1 })).toEqual({ result: { count: 1 } });
    expect(await h.sim.execute('bump_counter', { by: 1 })).toEqual({ result: { count: 2 } });
    await until(() => h!.audit.length === 4, 'four audit records');
    expect(h.runs).toHaveLength(2);
    expect(h.sim.violations).toEqual([]);
  });

  it('paces a call sent in a pair as one call: its twin takes no turn of its own', async () => {
    // Two turns at once, then one every ten seconds: a third turn would wait far past the test.
    const pace = { burst: 2, perSecond: 0.1 };
    h = await start({
      agent: { overrides: { policies: { bump_counter: 'allow' }, callPace: pace } },
    });
    await registered(h);
    const paced: unknown[] = [];
    h.agent.gate.events.on('callsPaced', (e) => paced.push(e));
    expect(await h.sim.execute('bump_counter', { by: 1 })).toEqual({ result: { count: 1 } });
    expect(await h.sim.execute('bump_counter', { by: 2 })).toEqual({ result: { count: 2 } });
    await until(() => h!.audit.length === 4, 'two runs and their two copies recorded');
    expect(h.audit.filter((r) => r.decision === 'duplicate')).toHaveLength(2);
    expect(paced).toEqual([]);
    // The pace is on: a third call (even sent once) has to wait its turn, and the user is told.
    void h.sim.execute('bump_counter', { by: 3 }, { duplicate: false }).catch(() => undefined);
    await until(() => paced.length === 1, 'the third call is paced');
    expect(h.runs).toHaveLength(2);
  });

  it('runs an id-less execute twin-less once, and never answers it', async () => {
    h = await start({ agent: { overrides: { policies: { bump_counter: 'allow' } } } });
    await registered(h);
    h.sim.conn().sendJson({
      jsonrpc: '2.0',
      method: 'mcp/tool/execute',
      params: { tool_name: 'bump_counter', tool_input: { by: 5 } },
    });
    await until(() => h!.audit.length === 1, 'the run is recorded');
    expect(h.runs).toEqual([{ by: 5 }]);
    expect(h.audit[0]!.callId).toMatch(/^idless-/);
    // A later request proves the link is still fine and that nothing answered the id-less call.
    await h.sim.execute('get_current_time', {}, { duplicate: false });
    expect(h.sim.responses).toHaveLength(1);
    expect(h.sim.violations).toEqual([]);
  });

  it('runs a request whose id comes again once, and answers that id once', async () => {
    h = await start({ agent: { overrides: { policies: { bump_counter: 'allow' } } } });
    await registered(h);
    const conn = h.sim.conn();
    const out = await conn.execute('bump_counter', {}, { duplicate: false });
    expect(out).toEqual({ result: { count: 1 } });
    const id = h.sim.executes[0]!.id;
    conn.sendJson({
      jsonrpc: '2.0',
      method: 'mcp/tool/execute',
      params: { tool_name: 'bump_counter', tool_input: {} },
      id,
    });
    await until(() => h!.audit.length === 2, 'the repeat is recorded');
    expect(h.audit[1]).toMatchObject({ callId: id, decision: 'duplicate' });
    await h.sim.execute('get_current_time', {}, { duplicate: false }); // a round trip
    expect(h.runs).toHaveLength(1);
    expect(h.sim.responses.filter((r) => r.id === id)).toHaveLength(1);
    expect(h.sim.violations).toEqual([]);
  });

  it.each([
    ['without an id', {}],
    ['with the same id', { id: 7 }],
  ])('keeps a flood of copies of one call (%s) to the calls-in-flight limit', async (_, id) => {
    // Each copy is recorded by the gate; they used to be fired off without waiting, so a server
    // repeating one call could start any number at once (50 000 seen) past the per-socket limit.
    const COPIES = MAX_CALLS_IN_FLIGHT * 3;
    const held: (() => void)[] = [];
    let running = 0;
    let peak = 0;
    let ended = 0;
    const gate: Gate = {
      dispatch: async () => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise<void>((resolve) => held.push(resolve));
        running -= 1;
        ended += 1;
        return { ok: true, data: null };
      },
    };
    h = await start({ session: { gate } });
    await registered(h);
    const conn = h.sim.conn();
    const execute = {
      jsonrpc: '2.0',
      method: 'mcp/tool/execute',
      params: { tool_name: 'get_current_time', tool_input: { format: 'simple' } },
      ...id,
    };
    for (let i = 0; i < COPIES; i++) conn.sendJson(execute);
    await until(() => running >= MAX_CALLS_IN_FLIGHT, 'the limit reached');
    // What the socket still delivers now must wait: give it the chance to overrun the limit.
    await new Promise((r) => setTimeout(r, 100));
    expect(running).toBe(MAX_CALLS_IN_FLIGHT);
    // As copies end, the rest take their turn, never more at once.
    while (ended < COPIES) {
      held.splice(0).forEach((release) => release());
      await until(() => held.length > 0 || ended === COPIES, 'the next copies');
    }
    expect(peak).toBe(MAX_CALLS_IN_FLIGHT);
    expect(h.session.state.status).toBe('ready');
  });

  it('runs and answers a repeated identical call once the duplicate window has passed', async () => {
    h = await start({
      agent: { overrides: { policies: { bump_counter: 'allow' } } },
      session: { duplicateWindowMs: 30 },
    });
    await registered(h);
    const conn = h.sim.conn();
    conn.sendJson({
      jsonrpc: '2.0',
      method: 'mcp/tool/execute',
      params: { tool_name: 'bump_counter', tool_input: {} },
    });
    await until(() => h!.runs.length === 1, 'first run');
    await new Promise((r) => setTimeout(r, 60));
    const out = await conn.execute('bump_counter', {}, { duplicate: false });
    expect(out).toEqual({ result: { count: 2 } });
    expect(h.sim.violations).toEqual([]);
  });
});

describe('Robot session: chat', () => {
  it('streams chunks as deltas, ends with the whole final (its extra text a last delta), and shows thoughts, on the text turn', async () => {
    h = await start();
    await registered(h);
    const deltas = h.record('replyDelta');
    const thoughts = h.record('thought');
    h.sim.onText((_text, conn) => {
      conn.aiMessage('thought', 'The user greets me.');
      conn.aiMessage('chunk', 'Hello ');
      conn.aiMessage('chunk', 'there');
      conn.aiMessage('final', 'Hello there!');
    });
    const done = nextEvent(h.session.events, 'replyDone');
    const sent = h.session.sendText('hi robot');
    expect(sent.ok).toBe(true);
    const taskId = sent.ok ? sent.taskId : '';
    expect(await done).toEqual({ taskId, text: 'Hello there!' });
    expect(deltas).toEqual([
      { taskId, text: 'Hello ' },
      { taskId, text: 'there' },
      // The final is the reply: what the chunks did not show goes out too.
      { taskId, text: '!' },
    ]);
    expect(thoughts).toEqual([{ taskId, text: 'The user greets me.' }]);
    // GUESS (no documented text input): the turn goes out as mcp/user/message.
    expect(h.sim.texts).toEqual([{ conn: 1, text: 'hi robot' }]);
    const msg = h.sim.received.find(
      (m) => (m.json as { method?: string })?.method === 'mcp/user/message',
    );
    expect(msg?.json).toEqual({
      jsonrpc: '2.0',
      method: 'mcp/user/message',
      params: { type: 'text', content: 'hi robot', mac_addr: 'AA-BB-CC-DD-EE-0F' },
    });
  });

  it('shows a reply that comes only as a final: its text is the reply (issue 14 item 15)', async () => {
    h = await start();
    await registered(h);
    const deltas = h.record('replyDelta');
    h.sim.onText((_text, conn) => conn.aiMessage('final', 'Only the final.'));
    const done = nextEvent(h.session.events, 'replyDone');
    const sent = h.session.sendText('hi');
    const taskId = sent.ok ? sent.taskId : '';
    expect(await done).toEqual({ taskId, text: 'Only the final.' });
    // A host that prints deltas (the terminal) prints it too.
    expect(deltas).toEqual([{ taskId, text: 'Only the final.' }]);
  });

  it('takes a final that differs from the chunks as the reply', async () => {
    h = await start();
    await registered(h);
    h.sim.onText((_text, conn) => {
      conn.aiMessage('chunk', 'It is 3 pm');
      conn.aiMessage('final', 'It is 3:05 pm.');
    });
    const done = nextEvent(h.session.events, 'replyDone');
    h.session.sendText('time?');
    expect((await done).text).toBe('It is 3:05 pm.');
  });

  it('gives a reply the server starts on its own a fresh task, and reads events encoded twice', async () => {
    h = await start({ sim: { doubleEncodeEvents: true } });
    await registered(h);
    const deltas = h.record('replyDelta');
    const done = nextEvent(h.session.events, 'replyDone');
    h.sim.aiMessage('chunk', '你好');
    h.sim.aiMessage('final', '');
    const reply = await done;
    expect(reply.text).toBe('你好');
    expect(deltas).toEqual([{ taskId: reply.taskId, text: '你好' }]);
  });

  it('runs the demo: a time question calls get_current_time and the answer streams back', async () => {
    h = await start({ sim: { demo: true } });
    await registered(h);
    const thoughts = h.record('thought');
    const done = nextEvent(h.session.events, 'replyDone');
    h.session.sendText('what time is it?');
    const reply = await done;
    expect(reply.text).toMatch(/^It's .+\.$/);
    expect(thoughts[0]?.text).toMatch(/get_current_time/);
    expect(h.sim.responses).toHaveLength(1);
    await until(() => h!.audit.length === 2, 'run and duplicate recorded');
    expect(h.audit.map((r) => r.decision).sort()).toEqual(['auto', 'duplicate']);
    expect(h.sim.violations).toEqual([]);
  });

  it('refuses speak, and text while not connected', async () => {
    h = await start({ session: { url: 'ws://127.0.0.1:1/ws' }, waitReady: false });
    expect(h.session.speak('hello')).toEqual({
      ok: false,
      message: 'Making the character say a given text is not possible on a robot server connection',
    });
    expect(h.session.capabilities).toEqual({ chat: true, voice: true, speak: false });
    const sent = h.session.sendText('hello');
    expect(sent.ok).toBe(false);
    expect(!sent.ok && sent.message).toMatch(/not connected/);
  });
});

describe('Robot session: voice', () => {
  it('uploads PCM between start_stream and end_stream, in 20–60 ms frames', async () => {
    h = await start();
    await registered(h);
    const pcm = sineTone(250, 440, 0.1);
    const started = h.session.voiceStart();
    expect(started.ok).toBe(true);
    const taskId = started.ok ? started.taskId : '';
    for (let at = 0; at < pcm.length; at += 1000)
      expect(h.session.voiceChunk(taskId, pcm.subarray(at, at + 1000))).toEqual({ ok: true });
    expect(h.session.voiceEnd(taskId)).toEqual({ ok: true });
    const stream = await h.sim.waitForStream();
    expect(stream).toMatchObject({ started: true, end: 'end_stream' });
    expect(stream.pcm.equals(pcm)).toBe(true);
    const frames = h.sim.received.filter((m) => m.binary).map((m) => m.binary!.length);
    expect(frames.slice(0, -1).every((n) => n >= 640 && n <= 1920)).toBe(true);
    expect(frames.at(-1)).toBeLessThanOrEqual(1920);
    expect(h.session.voiceChunk(taskId, pcm)).toMatchObject({ ok: false });
  });

  it('plays reply audio from start_audio to the empty frame, and ends a voice-only reply there', async () => {
    h = await start();
    await registered(h);
    const audio = h.record('audio');
    const started = h.session.voiceStart();
    const taskId = started.ok ? started.taskId : '';
    h.session.voiceEnd(taskId);
    const pcm = sineTone(200, 300, 0.1);
    const done = nextEvent(h.session.events, 'replyDone');
    h.sim.sendAudio(pcm, 1001); // odd frame sizes: samples are joined across frames
    expect(await done).toEqual({ taskId, text: '' });
    expect(Buffer.concat(audio.map((a) => a.data)).equals(pcm)).toBe(true);
    expect(audio.every((a) => a.taskId === taskId && a.sampleRate === 16000)).toBe(true);
    expect(audio.every((a) => a.data.length % 2 === 0)).toBe(true);
  });

  it('stops uploading when the server’s VAD sends stop_stream; later chunks are ignored', async () => {
    h = await start({ sim: { vadStopAfterMs: 100 } });
    await registered(h);
    const listen = nextEvent(h.session.events, 'listen');
    const started = h.session.voiceStart();
    const taskId = started.ok ? started.taskId : '';
    const chunk = sineTone(60, 440, 0.1);
    h.session.voiceChunk(taskId, chunk);
    h.session.voiceChunk(taskId, chunk);
    expect(await listen).toEqual({ taskId, message: { state: 'stop' } });
    const before = h.sim.receivedPcm().length;
    expect(h.session.voiceChunk(taskId, chunk)).toEqual({ ok: true, ignored: true });
    expect(h.session.voiceEnd(taskId)).toEqual({ ok: true, ignored: true });
    await h.sim.execute('get_current_time', {}, { duplicate: false }); // a round trip
    expect(h.sim.receivedPcm().length).toBe(before);
    expect(h.sim.streams).toHaveLength(1);
    expect(h.sim.streams[0]!.end).toBe('stop_stream');
    expect(
      h.sim.received.some(
        (m) => (m.json as { method?: string })?.method === 'mcp/audio/end_stream',
      ),
    ).toBe(false);
  });

  it('drops the rest of a reply’s audio and text after a barge-in', async () => {
    h = await start();
    await registered(h);
    const audio = h.record('audio');
    const deltas = h.record('replyDelta');
    const interrupted = h.record('replyInterrupted');
    const sent = h.session.sendText('tell me a story');
    const taskId = sent.ok ? sent.taskId : '';
    const conn = h.sim.conn();
    conn.aiMessage('chunk', 'Once upon');
    conn.sendJson({ jsonrpc: '2.0', method: 'mcp/server/start_audio', params: {} });
    conn.sendBinary(sineTone(40, 300, 0.1));
    await until(() => audio.length === 1 && deltas.length === 1, 'the reply began');
    h.session.interrupt();
    expect(interrupted).toEqual([{ taskId, text: 'Once upon' }]);
    conn.aiMessage('chunk', ' a time');
    conn.sendBinary(sineTone(40, 300, 0.1));
    conn.aiMessage('final', 'Once upon a time');
    conn.sendBinary(Buffer.alloc(0));
    // The next reply plays again.
    const done = nextEvent(h.session.events, 'replyDone');
    conn.aiMessage('final', 'Next.');
    conn.sendAudio(sineTone(40, 300, 0.1));
    const next = await done;
    expect(next.text).toBe('Next.');
    expect(next.taskId).not.toBe(taskId);
    await until(() => audio.length > 1, 'the next reply’s audio');
    // Nothing more of the interrupted reply; the next one (final only) is shown as its text.
    expect(deltas).toEqual([
      { taskId, text: 'Once upon' },
      { taskId: next.taskId, text: 'Next.' },
    ]);
    expect(audio.slice(1).every((a) => a.taskId === next.taskId)).toBe(true);
  });
});

describe('Robot session: robustness', () => {
  it('survives malformed frames and unknown methods; answers only where there is an id', async () => {
    h = await start();
    await registered(h);
    const conn = h.sim.conn();
    conn.sendRaw('this is not json');
    conn.sendRaw('[1,2,3]');
    conn.sendJson({ jsonrpc: '2.0', method: 'mcp/unknown/thing', params: {} });
    conn.sendJson({
      jsonrpc: '2.0',
      method: 'mcp/ai/message',
      params: { type: 'mood', content: 'x' },
    });
    conn.sendJson({ jsonrpc: '2.0', id: 'r1', result: { whatever: true } });
    conn.sendJson({ jsonrpc: '2.0', method: 'mcp/unknown/request', params: {}, id: 'q1' });
    conn.sendBinary(Buffer.alloc(0));
    const answer = await h.sim.waitFor((m) => (m.json as { id?: string } | undefined)?.id === 'q1');
    expect(answer.json).toMatchObject({ jsonrpc: '2.0', id: 'q1', error: { code: -32601 } });
    // Still healthy: a call works and nothing else was answered.
    const out = await h.sim.execute('get_current_time', {});
    expect(out.result).toBeDefined();
    const responses = h.sim.received.filter((m) => {
      const j = m.json as Record<string, unknown> | undefined;
      return j && !('method' in j);
    });
    expect(responses).toHaveLength(2); // q1 and the execute
    expect(h.logs.filter((l) => l.level === 'warn').length).toBeGreaterThanOrEqual(3);
    expect(h.session.state.status).toBe('ready');
    // The sim flags only q1's answer (an id it never sent), nothing else.
    expect(h.sim.violations).toEqual([
      expect.stringMatching(/a response to id "q1", which the server never sent/),
    ]);
  });

  it('does not send a result on a new link for a call made on the old one', async () => {
    h = await start();
    const asked: string[] = [];
    h.agent.broker.attach({ name: 'test' });
    let answer: () => boolean = () => true;
    h.agent.events.on('prompt', (p) => {
      asked.push(p.id);
      answer = () => h!.agent.answerPrompt(p.id, 'once');
    });
    await registered(h);
    const pending = h.sim.execute('bump_counter', {}, { duplicate: false }).catch((e: Error) => e);
    await until(() => asked.length === 1, 'the prompt');
    h.sim.dropConnections();
    expect(await pending).toBeInstanceOf(Error);
    await h.sim.waitForRegistration((r) => r.conn === 2);
    // The server that asked is gone: the question was withdrawn, so a late allow does nothing.
    expect(answer()).toBe(false);
    await until(
      () => h!.agent.audit.select({}).some((r) => r.service === 'bump_counter'),
      'the call recorded',
    );
    const audit = await h.agent.queryAudit({ service: 'bump_counter' });
    expect(audit.records.map((r) => [r.decision, r.outcome])).toEqual([['withdrawn', 'cancelled']]);
    expect(h.sim.responses).toHaveLength(0);
    expect(h.sim.violations).toEqual([]);
  });

  it('leaves no socket and no timer behind after stop', async () => {
    const clock = new FakeClock(Date.now());
    h = await start({ session: { clock } });
    await h.sim.waitForRegistration();
    await registered(h);
    expect(clock.pendingTimers()).toBeGreaterThan(0); // the link's health timer at least
    await h.session.stop();
    expect(h.session.state).toMatchObject({ status: 'offline', reason: 'stopped' });
    expect(clock.pendingTimers()).toBe(0);
    await until(() => h!.sim.openConnections === 0, 'the server sees the close');
    expect(h.sim.connections).toBe(1);
  });
});
