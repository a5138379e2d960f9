import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { main } from '../../sim/robot/cli.js';
import { RobotSim, type RobotSimOptions } from '../../sim/robot/server.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { until } from '../helpers/wait.js';

/** A bare WebSocket client: sends what a test says, keeps everything the simulator sends. */
class RawClient {
  readonly texts: unknown[] = [];
  readonly rawTexts: string[] = [];
  readonly binaries: Buffer[] = [];
  closed = false;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const buf = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
      if (isBinary) this.binaries.push(buf);
      else {
        const text = buf.toString('utf8');
        this.rawTexts.push(text);
        this.texts.push(JSON.parse(text));
      }
    });
    ws.on('close', () => (this.closed = true));
    ws.on('error', () => undefined);
  }

  static async connect(url: string): Promise<RawClient> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new RawClient(ws);
  }

  send(value: unknown): void {
    this.ws.send(typeof value === 'string' ? value : JSON.stringify(value));
  }

  register(tools: unknown[] = [TIME_TOOL], mac = 'AA-BB-CC-DD-EE-FF', id = 'reg-1'): void {
    this.send({
      jsonrpc: '2.0',
      method: 'mcp/registerTools',
      params: { mac_addr: mac, tools },
      id,
    });
  }

  /** The executes received so far that carry an id. */
  requests(): Array<{ id: string | number; params: { tool_name: string; tool_input: unknown } }> {
    return this.texts.filter(
      (m) =>
        (m as { method?: string; id?: unknown }).method === 'mcp/tool/execute' &&
        'id' in (m as object),
    ) as never;
  }

  async waitText(pred: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    let found: Record<string, unknown> | undefined;
    await until(() => {
      found = this.texts.find((m) => pred(m as Record<string, unknown>)) as never;
      return found !== undefined;
    }, 'a matching message from the simulator');
    return found!;
  }

  close(): void {
    this.ws.terminate();
  }
}

const TIME_TOOL = {
  name: 'get_current_time',
  description: 'The time',
  main_type: 'remote',
  sub_type: 'query',
  parameters: { type: 'object', properties: {} },
};

let sim: RobotSim | undefined;
const clients: RawClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await sim?.stop();
  sim = undefined;
});

async function setup(options: RobotSimOptions = {}): Promise<{ sim: RobotSim; c: RawClient }> {
  sim = await RobotSim.start({ demo: false, ...options });
  const c = await RawClient.connect(sim.url);
  clients.push(c);
  return { sim, c };
}

describe('RobotSim: registration', () => {
  it('refuses to start on a port already in use with an error, without ending the process', async () => {
    const first = await RobotSim.start({});
    try {
      await expect(RobotSim.start({ port: first.port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.stop();
    }
  });

  it('listens on 127.0.0.1 at /ws, records the registration and acks it the doc’s way', async () => {
    const { sim, c } = await setup();
    expect(sim.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ws$/);
    c.register();
    const reg = await sim.waitForRegistration();
    expect(reg).toMatchObject({ conn: 1, id: 'reg-1', macAddr: 'AA-BB-CC-DD-EE-FF' });
    expect(reg.tools).toEqual([TIME_TOOL]);
    expect(await c.waitText((m) => m.id === 'reg-1')).toEqual({
      jsonrpc: '2.0',
      id: 'reg-1',
      result: { status: 'registered', message: 'Tools were successfully registered.' },
    });
    expect(sim.violations).toEqual([]);
  });

  it('acks the server code’s way (no jsonrpc, status success), or not at all', async () => {
    const { sim, c } = await setup({ ackShape: 'success' });
    c.register();
    expect(await c.waitText((m) => m.id === 'reg-1')).toEqual({
      id: 'reg-1',
      result: { status: 'success' },
    });
    sim.setAck('none');
    c.register([TIME_TOOL], 'AA-BB-CC-DD-EE-FF', 'reg-2');
    await sim.waitForRegistration((r) => r.id === 'reg-2');
    await new Promise((r) => setTimeout(r, 30));
    expect(c.texts.filter((m) => (m as { id?: string }).id === 'reg-2')).toEqual([]);
  });

  it('flags a missing mac_addr, a malformed one, a write tool as control and a missing id', async () => {
    const { sim, c } = await setup();
    c.send({
      jsonrpc: '2.0',
      method: 'mcp/registerTools',
      params: { tools: [{ ...TIME_TOOL, name: 'create_file', sub_type: 'control' }] },
    });
    c.register([TIME_TOOL], 'aa:bb:cc:dd:ee:ff', 'reg-2');
    await sim.waitForRegistration((r) => r.id === 'reg-2');
    expect(sim.violations).toEqual([
      expect.stringMatching(/conn 1: mcp\/registerTools without an id/),
      expect.stringMatching(/without params\.mac_addr/),
      expect.stringMatching(/write-class tool 'create_file' registered as control/),
      expect.stringMatching(/mac_addr 'aa:bb:cc:dd:ee:ff' is not in the doc's form/),
    ]);
  });
});

describe('RobotSim: executes', () => {
  it.each([
    ['id-first', ['id', 'idless']],
    ['idless-first', ['idless', 'id']],
  ] as const)(
    'sends each execute twice (%s) and resolves with the response',
    async (order, shape) => {
      const { sim, c } = await setup({ duplicateOrder: order });
      c.register();
      await sim.waitForRegistration();
      const pending = sim.execute('get_current_time', { format: 'simple' });
      await until(
        () =>
          c.texts.filter((m) => (m as { method?: string }).method === 'mcp/tool/execute').length ===
          2,
        'two executes',
      );
      const executes = c.texts.filter(
        (m) => (m as { method?: string }).method === 'mcp/tool/execute',
      ) as Array<Record<string, unknown>>;
      expect(executes.map((m) => ('id' in m ? 'id' : 'idless'))).toEqual(shape);
      expect(executes[0]!.params).toEqual(executes[1]!.params);
      expect(executes[0]!.params).toEqual({
        tool_name: 'get_current_time',
        tool_input: { format: 'simple' },
      });
      const id = c.requests()[0]!.id;
      c.send({ jsonrpc: '2.0', id, result: '12:00' });
      expect(await pending).toEqual({ result: '12:00' });
      expect(sim.violations).toEqual([]);
    },
  );

  it('sends one copy when duplicates are off, with number ids when asked', async () => {
    const { sim, c } = await setup({ duplicateExecutes: false, numericIds: true });
    c.register();
    await sim.waitForRegistration();
    const pending = sim.execute('get_current_time', {});
    await until(() => c.requests().length === 1, 'the execute');
    const id = c.requests()[0]!.id;
    expect(typeof id).toBe('number');
    c.send({ jsonrpc: '2.0', id, error: { code: -32003, message: 'denied' } });
    expect(await pending).toEqual({ error: { code: -32003, message: 'denied' } });
    expect(c.texts).toHaveLength(2); // the ack and one execute
    expect(sim.violations).toEqual([]);
  });

  it('flags a second response, a response without id, an unknown id, a changed id type and a bad code', async () => {
    const { sim, c } = await setup({ duplicateExecutes: false });
    c.register();
    await sim.waitForRegistration();
    const pending = sim.execute('get_current_time', {});
    await until(() => c.requests().length === 1, 'the execute');
    const id = c.requests()[0]!.id as string;
    c.send({ jsonrpc: '2.0', id, error: { code: -32602, message: 'bad' } });
    c.send({ jsonrpc: '2.0', id, result: 'again' });
    c.send({ jsonrpc: '2.0', id: null, result: 'to the id-less one' });
    c.send({ jsonrpc: '2.0', id: 'nobody', result: 1 });
    c.send({ id: 'x', result: 1 });
    expect(await pending).toEqual({ error: { code: -32602, message: 'bad' } });
    await until(() => sim.violations.length === 6, 'six violations');
    expect(sim.violations).toEqual([
      expect.stringMatching(/error code -32602 .* is outside -32000…-32099/),
      expect.stringMatching(/2 responses to execute/),
      expect.stringMatching(/a response without an id/),
      expect.stringMatching(/a response to id "nobody"/),
      expect.stringMatching(/without jsonrpc "2\.0"/),
      expect.stringMatching(/a response to id "x"/),
    ]);
  });

  it('rejects an execute that gets no answer in time', async () => {
    const clock = new FakeClock();
    const { sim, c } = await setup({ clock, executeTimeoutMs: 1000 });
    c.register();
    await sim.waitForRegistration();
    const pending = sim.execute('get_current_time', {}).catch((e: Error) => e);
    expect(sim.pendingTimers).toBe(1);
    clock.advance(1000);
    expect(((await pending) as Error).message).toMatch(/no response to execute .* within 1000 ms/);
    expect(sim.pendingTimers).toBe(0);
    // It says it stopped waiting (MCP's way); an answer after that breaks the rule.
    const cancel = await c.waitText((m) => m.method === 'notifications/cancelled');
    const id = (cancel.params as { requestId: string }).requestId;
    c.send({ jsonrpc: '2.0', id, result: 'late' });
    await until(() => sim.violations.length > 0, 'the violation');
    expect(sim.violations).toEqual([
      expect.stringMatching(/a response to execute '.*', which the server had cancelled/),
    ]);
  });
});

describe('RobotSim: chat and audio', () => {
  it('sends ai messages and audio (start_audio, frames, empty frame), encoded twice when asked', async () => {
    const { sim, c } = await setup({ doubleEncodeEvents: true });
    c.register();
    await sim.waitForRegistration();
    sim.aiMessage('chunk', 'hi');
    sim.sendAudio(Buffer.alloc(5000, 1), 2000);
    await until(() => c.binaries.length === 4, 'three frames and the end');
    expect(c.rawTexts[1]).toBe(
      JSON.stringify(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'mcp/ai/message',
          params: { type: 'chunk', content: 'hi' },
        }),
      ),
    );
    expect(JSON.parse(c.texts[2] as string)).toEqual({
      jsonrpc: '2.0',
      method: 'mcp/server/start_audio',
      params: {},
    });
    expect(c.binaries.map((b) => b.length)).toEqual([2000, 2000, 1000, 0]);
  });

  it('records a voice upload and its end; its VAD stops a long one', async () => {
    const { sim, c } = await setup({ vadStopAfterMs: 100 });
    c.register();
    await sim.waitForRegistration();
    c.send({ jsonrpc: '2.0', method: 'mcp/audio/start_stream', params: {} });
    c.ws.send(Buffer.alloc(1000, 2));
    c.send({ jsonrpc: '2.0', method: 'mcp/audio/end_stream', params: {} });
    const first = await sim.waitForStream();
    expect(first).toMatchObject({ started: true, end: 'end_stream' });
    expect(first.pcm.length).toBe(1000);

    c.send({ jsonrpc: '2.0', method: 'mcp/audio/start_stream', params: {} });
    c.ws.send(Buffer.alloc(2000, 3));
    c.ws.send(Buffer.alloc(2000, 3));
    await c.waitText((m) => m.method === 'mcp/audio/stop_stream');
    c.ws.send(Buffer.alloc(640, 3)); // in flight when the stop was sent: not a new upload
    const second = await sim.waitForStream((s) => s !== first);
    expect(second).toMatchObject({ end: 'stop_stream' });
    expect(second.pcm.length).toBe(4000);
    await until(() => sim.receivedPcm().length === 5640, 'every byte');
    expect(sim.conn().lateAudioBytes).toBe(640);
    expect(sim.streams).toHaveLength(2);
  });

  it('answers a typed time question with a thought, get_current_time, a streamed reply and voice', async () => {
    const { sim, c } = await setup({ demo: true });
    c.register();
    await sim.waitForRegistration();
    c.send({
      jsonrpc: '2.0',
      method: 'mcp/user/message',
      params: { type: 'text', content: 'what time is it?', mac_addr: 'AA-BB-CC-DD-EE-FF' },
    });
    await until(() => c.requests().length === 1, 'the execute');
    c.send({ jsonrpc: '2.0', id: c.requests()[0]!.id, result: '09:30' });
    const final = await c.waitText(
      (m) => (m.params as { type?: string } | undefined)?.type === 'final',
    );
    expect(final.params).toEqual({ type: 'final', content: "It's 09:30." });
    const ai = c.texts
      .filter((m) => (m as { method?: string }).method === 'mcp/ai/message')
      .map((m) => (m as { params: { type: string } }).params.type);
    expect(ai[0]).toBe('thought');
    expect(ai).toContain('chunk');
    await until(() => c.binaries.at(-1)?.length === 0, 'the voice ends');
    expect(sim.texts).toEqual([{ conn: 1, text: 'what time is it?' }]);
    expect(sim.violations).toEqual([]);
  });
});

describe('RobotSim: connections and stop', () => {
  it('drops connections on request and refuses other paths', async () => {
    const { sim, c } = await setup();
    sim.dropConnections();
    await until(() => c.closed, 'the client sees the drop');
    await expect(RawClient.connect(sim.url.replace('/ws', '/other'))).rejects.toThrow(/400/);
    const again = await RawClient.connect(sim.url);
    clients.push(again);
    await sim.waitForConnection(2);
    expect(sim.openConnections).toBe(1);
  });

  it('stops with nothing left: sockets closed, waiting executes failed, no timers', async () => {
    const { sim, c } = await setup();
    c.register();
    await sim.waitForRegistration();
    const pending = sim.execute('get_current_time', {}).catch((e: Error) => e);
    const waiting = sim.waitForStream().catch((e: Error) => e);
    const url = sim.url;
    await sim.stop();
    expect(((await pending) as Error).message).toMatch(/closed before execute/);
    expect(((await waiting) as Error).message).toMatch(/RobotSim stopped/);
    expect(sim.pendingTimers).toBe(0);
    expect(sim.openConnections).toBe(0);
    await until(() => c.closed, 'the client sees the close');
    await expect(RawClient.connect(url)).rejects.toThrow();
  });
});

describe('robot-sim command', () => {
  it('serves the demo until SIGINT and logs what happens', async () => {
    const signals = new EventEmitter();
    const out: string[] = [];
    let running: RobotSim | undefined;
    const exit = main(['--port', '0', '--idless-first'], {
      out: (l) => out.push(l),
      err: (l) => out.push(`ERR ${l}`),
      signals: signals as never,
      started: (s) => (running = s),
    });
    await until(() => running !== undefined, 'the server starts');
    const c = await RawClient.connect(running!.url);
    clients.push(c);
    c.register();
    await running!.waitForRegistration();
    await until(
      () => out.some((l) => /registerTools AA-BB-CC-DD-EE-FF: get_current_time/.test(l)),
      'the log line',
    );
    signals.emit('SIGINT');
    expect(await exit).toBe(0);
    expect(out[0]).toMatch(/^Robot demo server listening on ws:\/\/127\.0\.0\.1:\d+\/ws$/);
    expect(out.at(-1)).toBe('stopped');
  });

  it('refuses bad options with the usage', async () => {
    const out: string[] = [];
    const io = {
      out: (l: string) => out.push(l),
      err: (l: string) => out.push(l),
      signals: new EventEmitter() as never,
    };
    expect(await main(['--ack', 'maybe'], io)).toBe(2);
    expect(await main(['--vad-ms', 'x'], io)).toBe(2);
    expect(await main(['--bogus'], io)).toBe(2);
    expect(out.join('\n')).toMatch(/--ack must be registered, success or none/);
  });
});
