import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { OpusDecoder, OpusEncoder } from '../../app/audio/opus.js';
import { logXiaozhiEvents } from '../../sim/xiaozhi/log.js';
import { XiaozhiSim, type XiaozhiSimOptions } from '../../sim/xiaozhi/server.js';
import { decodeAudioFrame, encodeAudioFrame } from '../../app/wire/xiaozhi/binary.js';
import { deviceHello } from '../../app/wire/xiaozhi/messages.js';
import { correlation, samples, voiceLike } from '../audio/correlation.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { until } from '../helpers/wait.js';

// --- a hand-written device, so every rule the simulator checks can be broken on purpose ---------

type Json = Record<string, unknown>;

const GOOD_HEADERS = {
  'Device-Id': 'aa:bb:cc:dd:ee:02',
  'Client-Id': '123e4567-e89b-42d3-a456-426614174000',
  'Protocol-Version': '1',
};

class RawDevice {
  readonly texts: Json[] = [];
  readonly binaries: Buffer[] = [];
  closed = false;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const buf = data as Buffer;
      if (isBinary) this.binaries.push(buf);
      else this.texts.push(JSON.parse(buf.toString('utf8')) as Json);
    });
    ws.on('close', () => (this.closed = true));
  }

  static connect(url: string, headers: Record<string, string> = GOOD_HEADERS): Promise<RawDevice> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      ws.once('open', () => resolve(new RawDevice(ws)));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  send(message: Json): void {
    this.ws.send(JSON.stringify(message));
  }

  hello(extra: Json = {}): void {
    this.send({ ...deviceHello(1), ...extra });
  }

  async text(pred: (m: Json) => boolean, what = 'a message'): Promise<Json> {
    await until(() => this.texts.some(pred), what);
    return this.texts.find(pred)!;
  }

  /** The first MCP request with this method, and its payload. */
  async request(method: string): Promise<{ id: unknown; params: Json }> {
    const m = await this.text(
      (t) => t.type === 'mcp' && (t.payload as Json).method === method,
      `an MCP '${method}'`,
    );
    const payload = m.payload as Json;
    return { id: payload.id, params: payload.params as Json };
  }

  /** Answer MCP as a minimal device would: `tools` pages, and calls only when `call` is given. */
  serve(sessionId: () => string, tools: Json[][], call?: (p: Json) => Json): void {
    let page = 0;
    this.ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const m = JSON.parse((data as Buffer).toString('utf8')) as Json;
      if (m.type !== 'mcp') return;
      const p = m.payload as Json;
      const reply = (result: unknown) =>
        this.send({
          session_id: sessionId(),
          type: 'mcp',
          payload: { jsonrpc: '2.0', id: p.id, result },
        });
      if (p.method === 'initialize')
        reply({ protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: {} });
      else if (p.method === 'tools/list') {
        const i = page++;
        const next = tools[i + 1]?.[0]?.name;
        reply({ tools: tools[i] ?? [], ...(next ? { nextCursor: next } : {}) });
      } else if (p.method === 'tools/call' && call) reply(call(p.params as Json));
    });
  }

  close(): void {
    this.ws.terminate();
  }
}

const tool = (name: string, description = `does ${name}`): Json => ({
  name,
  description,
  inputSchema: { type: 'object', properties: {} },
});

let sims: XiaozhiSim[] = [];
let devices: RawDevice[] = [];
afterEach(async () => {
  for (const d of devices) d.close();
  await Promise.all(sims.map((s) => s.stop()));
  sims = [];
  devices = [];
});

async function start(options: XiaozhiSimOptions = {}): Promise<XiaozhiSim> {
  const sim = await XiaozhiSim.start({ demo: false, ...options });
  sims.push(sim);
  return sim;
}

async function device(
  sim: XiaozhiSim,
  headers?: Record<string, string>,
  path = '',
): Promise<RawDevice> {
  const d = await RawDevice.connect(sim.url + path, headers);
  devices.push(d);
  return d;
}

/** A device that says hello and serves `tools` pages; resolves once the server listed them. */
async function listed(
  sim: XiaozhiSim,
  pages: Json[][],
  call?: (p: Json) => Json,
): Promise<RawDevice> {
  const d = await device(sim);
  d.serve(() => sim.connections.at(-1)!.sessionId, pages, call);
  d.hello();
  await sim.waitForTools(sim.toolListings + 1);
  return d;
}

// ------------------------------------------------------------------------------------------------

describe('XiaozhiSim: connecting', () => {
  it('refuses a device without the right bearer token (HTTP 401), in header or query', async () => {
    const sim = await start({ token: 'tok' });
    await expect(RawDevice.connect(sim.url)).rejects.toThrow(/HTTP 401/);
    await expect(
      RawDevice.connect(sim.url, { ...GOOD_HEADERS, Authorization: 'Bearer nope' }),
    ).rejects.toThrow(/HTTP 401/);
    devices.push(
      await RawDevice.connect(sim.url, { ...GOOD_HEADERS, Authorization: 'Bearer tok' }),
    );
    devices.push(
      await RawDevice.connect(
        `${sim.url}?device-id=aa:bb:cc:dd:ee:03&client-id=${GOOD_HEADERS['Client-Id']}&authorization=${encodeURIComponent('Bearer tok')}`,
        { 'Protocol-Version': '1' },
      ),
    );
    expect(sim.refused).toHaveLength(2);
    expect(sim.connections.map((c) => [c.identity, c.token])).toEqual([
      ['headers', 'tok'],
      ['query', 'tok'],
    ]);
    expect(sim.violations).toEqual([]);
  });

  it('logs one line per event for the CLI, never the token', async () => {
    const sim = await start({ token: 'tok-secret' });
    const lines: string[] = [];
    const off = logXiaozhiEvents(sim, (l) => lines.push(l));
    await expect(RawDevice.connect(sim.url)).rejects.toThrow(/HTTP 401/);
    const d = await device(sim, { ...GOOD_HEADERS, Authorization: 'Bearer tok-secret' });
    d.serve(() => sim.connections[0]!.sessionId, [[tool('a'), tool('b')]]);
    d.hello();
    await sim.waitForTools(1);
    off();
    expect(lines).toEqual([
      'refused an upgrade: HTTP 401 Unauthorized',
      expect.stringMatching(/^\[1\] connected from 127\.0\.0\.1:\d+$/),
      '[1] device hello (protocol version 1)',
      '[1] tools: a, b',
    ]);
    expect(lines.join('\n')).not.toContain('tok-secret');
  });

  it('serves only /xiaozhi/v1/', async () => {
    const sim = await start();
    await expect(RawDevice.connect(sim.url.replace('/xiaozhi/v1/', '/other/'))).rejects.toThrow(
      /HTTP 404/,
    );
  });

  it('notes a missing or malformed identity and protocol version', async () => {
    const sim = await start();
    await device(sim, { 'Device-Id': 'laptop', 'Protocol-Version': '7' });
    await sim.waitForConnection(1);
    expect(sim.violations).toEqual([
      'conn 1: Device-Id "laptop" is not a MAC like aa:bb:cc:dd:ee:ff',
      'conn 1: no Client-Id (header or client-id query parameter)',
      'conn 1: Protocol-Version "7" is not 1, 2 or 3',
    ]);
  });

  it('sends initialize (id 1) before its hello, then a hello with session id and downlink rate', async () => {
    const sim = await start({ sessionId: 'sid-9', downlinkRate: 24_000 });
    const d = await device(sim);
    d.hello();
    await d.text((m) => m.type === 'hello', 'the server hello');
    expect(d.texts[0]).toEqual({
      session_id: 'sid-9',
      type: 'mcp',
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2024-11-05',
          capabilities: {},
          clientInfo: { name: 'xiaozhi-sim', version: '1.0.0' },
        },
      },
    });
    expect(d.texts[1]).toEqual({
      type: 'hello',
      transport: 'websocket',
      session_id: 'sid-9',
      audio_params: { format: 'opus', sample_rate: 24000, channels: 1, frame_duration: 60 },
    });
  });

  it('can say hello first, late, or never', async () => {
    const first = await start({ mcpBeforeHello: false });
    const a = await device(first);
    a.hello();
    await a.text((m) => m.type === 'mcp');
    expect(a.texts[0]!.type).toBe('hello');

    const clock = new FakeClock();
    const late = await start({ helloDelayMs: 5_000, mcpBeforeHello: false, clock });
    const l = await device(late);
    l.hello();
    await late.waitUntil(() => late.connections[0]?.hello, 'the device hello');
    expect(late.pendingTimers).toBe(1);
    clock.advance(5_000);
    await l.text((m) => m.type === 'hello', 'the late hello');

    const never = await start({ sendHello: false, mcpBeforeHello: false });
    const b = await device(never);
    b.hello();
    await never.waitUntil(() => never.connections[0]?.hello, 'the device hello');
    await new Promise((r) => setTimeout(r, 50));
    expect(b.texts).toEqual([]);
  });

  it('notes a device hello without features.mcp, and messages without session_id after the hello', async () => {
    const sim = await start();
    const d = await device(sim);
    d.hello({ features: {} });
    await d.text((m) => m.type === 'hello');
    d.send({ type: 'listen', state: 'detect', text: 'hi' });
    await sim.waitUntil(() => sim.listenEvents[0], 'the listen');
    expect(sim.violations).toEqual([
      'conn 1: the device hello has no features.mcp: true',
      "conn 1: a 'listen' message without session_id after the hello",
    ]);
  });

  it('drops every connection on request and stops leaving no timer or socket', async () => {
    const sim = await start({ callTimeoutMs: 60_000 });
    const d = await listed(sim, [[tool('slow')]]);
    void sim.callTool('slow').catch(() => undefined); // never answered by this device
    expect(sim.pendingTimers).toBe(1);
    sim.dropConnections();
    await until(() => d.closed, 'the device to see the close');
    expect(sim.pendingTimers).toBe(0);
    expect(sim.connections[0]!.open).toBe(false);
    await sim.stop();
    expect(sim.openConnections).toBe(0);
  });
});

describe('XiaozhiSim: MCP quirks of the real backend', () => {
  it('lists every page with id 2, following nextCursor, and asks for user tools when told', async () => {
    const sim = await start({ withUserTools: true });
    const pages = [[tool('a'), tool('b')], [tool('c')], [tool('d')]];
    const d = await listed(sim, pages);
    const lists = d.texts.filter((m) => (m.payload as Json | undefined)?.method === 'tools/list');
    expect(lists.map((m) => (m.payload as Json).id)).toEqual([2, 2, 2]);
    expect(lists.map((m) => (m.payload as Json).params)).toEqual([
      { cursor: '', withUserTools: true },
      { cursor: 'c', withUserTools: true },
      { cursor: 'd', withUserTools: true },
    ]);
    expect(sim.tools.map((t) => t.name)).toEqual(['a', 'b', 'c', 'd']);
    expect(sim.violations).toEqual([]);
  });

  it('notes a page over 8000 bytes and a tool listed twice', async () => {
    const sim = await start();
    await listed(sim, [[tool('big', 'x'.repeat(9000)), tool('big')]]);
    expect(sim.violations).toEqual([
      expect.stringMatching(/^conn 1: a tools\/list page of \d+ bytes \(limit 8000\)$/),
      "conn 1: tools/list sent 'big' twice",
    ]);
  });

  it('renames dotted tools to underscores and calls them by their listed name', async () => {
    const sim = await start({ renameDots: true });
    const calls: Json[] = [];
    await listed(sim, [[tool('self.get_status')]], (p) => {
      calls.push(p);
      return { content: [{ type: 'text', text: 'fine' }], isError: false };
    });
    expect(sim.tools.map((t) => [t.name, t.listedName])).toEqual([
      ['self_get_status', 'self.get_status'],
    ]);
    const result = await sim.callTool('self_get_status', { verbose: true });
    expect(calls).toEqual([{ name: 'self.get_status', arguments: { verbose: true } }]);
    expect(result).toMatchObject({ text: 'fine', isError: false });
  });

  it('reads only content[0].text of a result', async () => {
    const sim = await start();
    await listed(sim, [[tool('two')]], () => ({
      content: [
        { type: 'text', text: 'first' },
        { type: 'text', text: 'second' },
      ],
      isError: false,
    }));
    expect((await sim.callTool('two')).text).toBe('first');
  });

  it('notes a reply whose id type differs from the request, and one for an id never asked', async () => {
    const sim = await start();
    const d = await listed(sim, [[tool('t')]]);
    const sid = sim.connections[0]!.sessionId;
    const pending = sim.callTool('t', {}, { id: 5 });
    await d.request('tools/call');
    d.send({ session_id: sid, type: 'mcp', payload: { jsonrpc: '2.0', id: '5', result: {} } });
    await pending;
    d.send({ session_id: sid, type: 'mcp', payload: { jsonrpc: '2.0', id: 99, result: {} } });
    await sim.waitUntil(() => (sim.violations.length >= 3 ? true : undefined), 'violations');
    expect(sim.violations).toEqual([
      'conn 1: the reply to \'tools/call\' has id "5" (string); it was asked with 5 (number)',
      "conn 1: the result of tools/call 't' has no content[0].text",
      'conn 1: a reply for id 99, which was never asked',
    ]);
  });

  it('gives up on a call unanswered for callTimeoutMs, and tells the device it stopped waiting', async () => {
    const sim = await start({ callTimeoutMs: 50 });
    const d = await listed(sim, [[tool('t')]]);
    await expect(sim.callTool('t')).rejects.toThrow(
      /'tools\/call' \(id 10\) got no reply within 50 ms/,
    );
    const cancel = await d.text(
      (m) => m.type === 'mcp' && (m.payload as Json).method === 'notifications/cancelled',
      'the cancellation',
    );
    expect((cancel.payload as Json).params).toMatchObject({ requestId: 10 });
    expect(sim.pendingTimers).toBe(0);
  });

  it('waits by default at least as long as the agent’s default prompt plus a margin', async () => {
    const clock = new FakeClock(Date.now());
    const sim = await start({ clock });
    await listed(sim, [[tool('t')]]);
    const call = sim.callTool('t').catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 20));
    clock.advance(65_000);
    await new Promise((r) => setTimeout(r, 20));
    expect(sim.pendingTimers).toBe(1);
    clock.advance(60_000);
    expect(await call).toBeInstanceOf(Error);
  });
});

describe('XiaozhiSim: turns and audio', () => {
  it('demo: a typed time question calls get_current_time and speaks the answer with Opus audio', async () => {
    const sim = await start({ demo: true, sessionId: 's' });
    const d = await listed(sim, [[tool('get_current_time')]], () => ({
      content: [{ type: 'text', text: '12:34' }],
      isError: false,
    }));
    d.send({ session_id: 's', type: 'listen', state: 'detect', text: 'what time is it' });
    await d.text((m) => m.type === 'tts' && m.state === 'stop', 'the end of the reply');
    const replies = d.texts.filter((m) => m.type !== 'mcp' && m.type !== 'hello');
    expect(replies).toEqual([
      { session_id: 's', type: 'stt', text: 'what time is it' },
      { session_id: 's', type: 'llm', emotion: 'happy' },
      { session_id: 's', type: 'tts', state: 'start' },
      { session_id: 's', type: 'tts', state: 'sentence_start', text: "It's 12:34." },
      { session_id: 's', type: 'tts', state: 'stop' },
    ]);
    expect(d.binaries.length).toBeGreaterThan(3);
    // v1 frames are bare Opus packets at the announced 24 kHz.
    const decoder = new OpusDecoder(24_000);
    try {
      expect(decoder.decodePacket(d.binaries[0]!).length).toBe(1440 * 2);
    } finally {
      decoder.close();
    }
  });

  it('hears a voice turn between listen start and stop, decoded for correlation', async () => {
    const sim = await start({ demo: true });
    const d = await device(sim, { ...GOOD_HEADERS, 'Protocol-Version': '3' });
    d.send({ ...deviceHello(3) });
    await d.text((m) => m.type === 'hello');
    const sid = sim.connections[0]!.sessionId;
    const said = voiceLike(900);
    d.send({ session_id: sid, type: 'listen', state: 'start', mode: 'manual' });
    const encoder = new OpusEncoder();
    for (const packet of [...encoder.encodePcm(said), ...encoder.flush()])
      d.ws.send(encodeAudioFrame(3, packet));
    encoder.close();
    d.send({ session_id: sid, type: 'listen', state: 'stop' });
    await d.text((m) => m.type === 'tts' && m.state === 'stop');
    expect(d.texts.find((m) => m.type === 'stt')).toMatchObject({ text: '(voice)' });
    expect(d.texts.find((m) => m.state === 'sentence_start')?.text).toMatch(/I heard 9\d\d ms/);
    expect(correlation(samples(said), samples(sim.receivedPcm())).value).toBeGreaterThan(0.8);
    // Downlink frames carry the v3 header the device asked for.
    expect(() => decodeAudioFrame(3, d.binaries[0]!)).not.toThrow();
    expect(sim.listenEvents.map((e) => e.state)).toEqual(['start', 'stop']);
    expect(sim.violations).toEqual([]);
  });

  it('records aborts and sends system, alert and custom messages when asked', async () => {
    const sim = await start({ sessionId: 'x' });
    const d = await device(sim);
    d.hello();
    await d.text((m) => m.type === 'hello');
    d.send({ session_id: 'x', type: 'abort', reason: 'wake_word_detected' });
    await sim.waitUntil(() => sim.aborts[0], 'the abort');
    expect(sim.aborts).toEqual([{ conn: 1, reason: 'wake_word_detected' }]);
    sim.sendSystem('reboot');
    sim.sendAlert('low battery');
    await d.text((m) => m.type === 'alert');
    expect(d.texts.filter((m) => m.type === 'system' || m.type === 'alert')).toEqual([
      { session_id: 'x', type: 'system', command: 'reboot' },
      { session_id: 'x', type: 'alert', status: 'Warning', message: 'low battery', emotion: 'sad' },
    ]);
  });
});
