import { describe, expect, it } from 'vitest';
import { FrameType, SYSTEM_TASK, encodeFrame } from '../../app/wire/advent/frame.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { useSim } from './fixture.js';
import { textOf } from './raw-client.js';

const TIME_SERVICE = {
  description: 'Get the current time',
  parameters: {
    type: 'object',
    properties: { format: { type: 'string', enum: ['simple', 'detailed'] } },
  },
};

const status = (text: string) => (f: { type: number; payload: Buffer }) =>
  f.type === FrameType.STATUS && f.payload.toString() === text;

describe('AdventSim: authentication and STATUS', () => {
  const { start, client } = useSim();

  it('accepts any token by default, answers ##PING with ##INFO:PONG and sends no welcome', async () => {
    const sim = await start({ demo: false });
    const c = await client(sim);
    c.auth('header1234.token', { voiceid: 'Chinese (Mandarin)_Wise_Women', lang: 'zh' });
    c.status('##PING');
    const pong = await c.waitFrame(status('##INFO:PONG'));
    expect(pong).toMatchObject({ taskId: SYSTEM_TASK, seq: 0 });
    expect(c.frames).toHaveLength(1);
    expect(sim.lastAuth()).toEqual({
      token: 'header1234.token',
      params: { voiceid: 'Chinese (Mandarin)_Wise_Women', lang: 'zh' },
    });
    expect(sim.violations).toEqual([]);
  });

  it('sends the configured welcome text after an accepted AUTH', async () => {
    const sim = await start({ welcome: '##INFO:AUTH OK' });
    const c = await client(sim);
    c.auth();
    await c.waitFrame(status('##INFO:AUTH OK'));
  });

  it('delivers the reject text on task 00000000 seq 0000, then closes', async () => {
    const sim = await start({ auth: { reject: '##ERROR:invalid token' } });
    const c = await client(sim);
    c.auth('expired');
    await c.waitClose();
    expect(c.frames).toEqual([
      expect.objectContaining({ type: FrameType.STATUS, taskId: SYSTEM_TASK, seq: 0 }),
    ]);
    expect(c.frames[0]!.payload.toString()).toBe('##ERROR:invalid token');
    expect(c.ended).toBe(true);
  });

  it('closes without a word in silent-close mode', async () => {
    const sim = await start({ auth: 'silent-close' });
    const c = await client(sim);
    c.auth();
    await c.waitClose();
    expect(c.frames).toEqual([]);
  });

  it('answers nothing at all in ignore mode, yet records what arrives', async () => {
    const sim = await start({ auth: 'ignore' });
    const c = await client(sim);
    c.auth();
    c.status('##PING');
    await sim.waitFor((f) => f.text === '##PING');
    await new Promise((r) => setTimeout(r, 50));
    expect(c.frames).toEqual([]);
    expect(c.closed).toBe(false);
  });

  it('decides per token with an auth function, and setAuth changes the mode at runtime', async () => {
    const sim = await start({
      auth: (token, params) =>
        token === 'good' && params.lang === 'en' ? 'accept' : { reject: '##ERROR:401' },
    });
    const bad = await client(sim);
    bad.auth('bad', { lang: 'en' });
    await bad.waitFrame(status('##ERROR:401'));
    await bad.waitClose();

    const good = await client(sim);
    good.auth('good', { lang: 'en' });
    good.status('##PING');
    await good.waitFrame(status('##INFO:PONG'));

    sim.setAuth({ reject: '##ERROR:token expired' });
    const later = await client(sim);
    later.auth('good', { lang: 'en' });
    await later.waitFrame(status('##ERROR:token expired'));
    expect(sim.lastAuth(2)).toEqual({ token: 'good', params: { lang: 'en' } });
  });

  it('answers ##DISCONNECT, closes soon after, and flags a frame sent after it', async () => {
    const sim = await start({ disconnectCloseMs: 30 });
    const c = await client(sim);
    c.auth();
    c.status('##DISCONNECT');
    c.status('##PING');
    await c.waitFrame(status('##INFO:DISCONNECT 3 seconds'));
    await c.waitClose();
    expect(c.frames).toHaveLength(1);
    expect(sim.violations).toEqual(["conn 1: STATUS on task '00000000' after DISCONNECT"]);
  });

  it('drops a connection that stays silent longer than idleTimeoutMs', async () => {
    const sim = await start({ idleTimeoutMs: 80 });
    const c = await client(sim);
    c.auth();
    const t0 = Date.now();
    await c.waitClose();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(60);
    expect(c.ended).toBe(true);
    await sim.waitForClose(1);
    expect(sim.openConnections).toBe(0);
  });

  it('restarts the idle countdown on every byte the client sends (injected clock)', async () => {
    const clock = new FakeClock();
    const sim = await start({ clock, idleTimeoutMs: 100 });
    const c = await client(sim);
    c.auth();
    await sim.waitFor((f) => f.type === FrameType.AUTH);
    for (let i = 0; i < 5; i++) {
      clock.advance(90);
      c.status('##PING');
      await c.waitFrame(() => c.frames.length === i + 1);
    }
    expect(c.closed).toBe(false);
    clock.advance(100);
    await c.waitClose();
    expect(c.ended).toBe(true);
  });

  it('flags a frame before AUTH, and AUTH on the wrong task', async () => {
    const sim = await start();
    const c = await client(sim);
    c.status('##PING');
    c.send(FrameType.AUTH, 'abc', 3, 'tok');
    await sim.waitFor((f) => f.type === FrameType.AUTH);
    expect(sim.violations).toEqual([
      'conn 1: STATUS before AUTH (AUTH must be the first frame)',
      "conn 1: AUTH on task 'abc     ' seq 3; it must be task 00000000 seq 0000",
    ]);
    expect(c.frames).toEqual([]); // the PING before AUTH is not answered
  });

  it('flags a missing AUTH after authTimeoutMs on the injected clock', async () => {
    const clock = new FakeClock(1000);
    const sim = await start({ clock, authTimeoutMs: 5000 });
    const c = await client(sim);
    await sim.waitForConnection();
    clock.advance(4999);
    expect(sim.violations).toEqual([]);
    clock.advance(1);
    expect(sim.violations).toEqual(['conn 1: no AUTH within 5000 ms of connecting']);
    c.auth();
    const auth = await sim.waitFor((f) => f.type === FrameType.AUTH);
    expect(auth.at).toBe(6000);
    expect(sim.violations).toHaveLength(1);
  });

  it('flags a header whose seq is not four digits, however the bytes are split', async () => {
    const sim = await start();
    const c = await client(sim);
    c.auth();
    const bad = encodeFrame(FrameType.STATUS, SYSTEM_TASK, 0, '##PING');
    bad.write('00a0', 16, 'latin1');
    for (const byte of bad) {
      c.raw(Buffer.from([byte]));
      await new Promise((r) => setImmediate(r));
    }
    c.status('##PING');
    await c.waitFrame(status('##INFO:PONG'));
    expect(sim.violations).toEqual([
      'conn 1: frame type 5 on task \'00000000\' has seq "00a0": seq must be 4 ASCII digits',
      'conn 1: 31 bytes outside any frame',
    ]);
  });
});

describe('AdventSim: MCP', () => {
  const { start, client } = useSim();

  it('records each register and flags service definitions the server would refuse', async () => {
    const sim = await start();
    const c = await client(sim);
    c.auth();
    c.register({ get_current_time: TIME_SERVICE });
    c.register({
      get_current_time: TIME_SERVICE,
      'Bad-Name': { description: 'x', parameters: { type: 'object' } },
      no_desc: { parameters: { type: 'object' } },
      flat: { description: 'x', parameters: { type: 'string' } },
      wrong_required: {
        description: 'x',
        parameters: { type: 'object', properties: { a: { type: 'text' } }, required: ['b'] },
      },
    });
    await sim.waitFor(
      (f) =>
        f.type === FrameType.MCP &&
        (f.json as { data: { services: object } }).data.services !== undefined &&
        Object.keys((f.json as { data: { services: object } }).data.services).length > 1,
    );
    expect(sim.registrations()).toHaveLength(2);
    expect(sim.registrations()[0]).toEqual({ get_current_time: TIME_SERVICE });
    expect(sim.peer().services).toHaveProperty('wrong_required');
    expect(sim.violations).toEqual([
      "conn 1: register: service 'Bad-Name' has a name outside [a-z][a-z0-9_]*",
      "conn 1: register: service 'no_desc' has no description string",
      "conn 1: register: service 'flat': parameters is not a JSON Schema {type: 'object', ...}",
      `conn 1: register: service 'wrong_required': property 'a' has type "text"`,
      "conn 1: register: service 'wrong_required': required 'b' is not among its properties",
    ]);
  });

  it('flags an MCP payload that is not JSON or not {type, data}', async () => {
    const sim = await start();
    const c = await client(sim);
    c.auth();
    c.send(FrameType.MCP, 'mcp00001', 0, '{"type":"register",');
    c.mcp({ kind: 'register' });
    c.mcp({ type: 'call', data: {} });
    await sim.waitFor(
      (f) => f.type === FrameType.MCP && (f.json as { type?: string })?.type === 'call',
    );
    expect(sim.violations).toHaveLength(3);
    expect(sim.violations[0]).toMatch(/^conn 1: MCP payload is not valid JSON/);
    expect(sim.violations[1]).toBe('conn 1: MCP payload is not an object {type: string, data}');
    expect(sim.violations[2]).toMatch(/unexpected MCP message 'call'/);
  });

  it('sends a call and resolves with the result carrying the same call_id', async () => {
    const sim = await start();
    const c = await client(sim);
    c.auth();
    const peer = await sim.waitForConnection();
    const pending = peer.call('get_current_time', { format: 'simple' });
    const call = await c.waitFrame((f) => f.type === FrameType.MCP);
    expect(call).toMatchObject({ taskId: 'mcp00001', seq: 0 });
    const body = JSON.parse(call.payload.toString()) as {
      type: string;
      data: { call_id: string; method: string; params: unknown };
    };
    expect(body).toEqual({
      type: 'call',
      data: { call_id: 'call_001', method: 'get_current_time', params: { format: 'simple' } },
    });
    c.result('call_999', { success: true, data: 'wrong call' });
    c.result(body.data.call_id, { success: true, data: '2025-01-22 14:30:25' });
    await expect(pending).resolves.toEqual({ success: true, data: '2025-01-22 14:30:25' });
    expect(sim.violations).toEqual(['conn 1: a result for unknown call_id call_999']);
  });

  it('records a second result for the same call_id as a violation', async () => {
    const sim = await start();
    const c = await client(sim);
    c.auth();
    const peer = await sim.waitForConnection();
    const pending = peer.call(
      'create_file',
      { filename: 'a.txt', content: 'x' },
      { callId: 'c-1' },
    );
    await c.waitFrame((f) => f.type === FrameType.MCP);
    c.result('c-1', { success: false, error: 'denied by the user' });
    c.result('c-1', { success: true, data: 'a.txt' });
    await expect(pending).resolves.toEqual({ success: false, error: 'denied by the user' });
    await sim.waitFor((f) => f.text?.includes('"a.txt"') ?? false);
    expect(sim.violations).toEqual(['conn 1: a second result for call_id c-1']);
  });

  it('flags a malformed result: no success flag, or a failure without an error message', async () => {
    const sim = await start();
    const c = await client(sim);
    c.auth();
    const peer = await sim.waitForConnection();
    const calls = [peer.call('a', {}, { callId: 'x1' }), peer.call('b', {}, { callId: 'x2' })];
    c.mcp({ type: 'result', data: { call_id: 'x1', result: { ok: true } } });
    c.result('x2', { success: false });
    await expect(calls[1]).resolves.toEqual({ success: false });
    expect(sim.violations).toEqual([
      'conn 1: result for x1 has no {success: boolean} object',
      'conn 1: result for x2 has success:false but no error message',
    ]);
    sim.peer().drop();
    await expect(calls[0]).rejects.toThrow(
      /connection 1 closed before the result of MCP call x1 \(a\)/,
    );
  });

  it('sends every call of callMany before any result and matches results answered out of order', async () => {
    const sim = await start();
    const c = await client(sim);
    c.auth();
    const peer = await sim.waitForConnection();
    const all = peer.callMany([
      { method: 'get_current_time', params: { format: 'simple' } },
      { method: 'create_file', params: { filename: 'n.txt', content: 'hi' }, taskId: 'mcp2' },
      { method: 'get_current_time' },
    ]);
    await c.waitFrame(() => c.frames.length === 3);
    const ids = c.frames.map(
      (f) => (JSON.parse(f.payload.toString()) as { data: { call_id: string } }).data.call_id,
    );
    expect(new Set(ids).size).toBe(3);
    expect(c.frames[1]!.taskId).toBe('mcp2    ');
    for (const [i, id] of [...ids.entries()].reverse()) c.result(id, { success: true, data: i });
    await expect(all).resolves.toEqual([
      { success: true, data: 0 },
      { success: true, data: 1 },
      { success: true, data: 2 },
    ]);
  });

  it('rejects a call nobody answers with a message naming the call', async () => {
    const sim = await start({ callTimeoutMs: 40 });
    await client(sim);
    const peer = await sim.waitForConnection();
    await expect(peer.call('get_current_time')).rejects.toThrow(
      'no result for MCP call call_001 (get_current_time) within 40 ms on connection 1',
    );
  });
});

describe('AdventSim: turns and scripted replies', () => {
  const { start, client } = useSim();

  it('hands a text turn to onTurn once END_FRAME arrives, and the reply reaches the client', async () => {
    const sim = await start();
    sim.onTurn(async (turn, peer) => {
      await peer.text(turn.taskId, ['Hello, ', 'how ', 'are you?']);
      await peer.emoji(turn.taskId, 'happy');
      await peer.end(turn.taskId);
    });
    const c = await client(sim);
    c.auth();
    c.send(FrameType.TEXT, 'a1b2c3d4', 0, 'hi ');
    c.send(FrameType.TEXT, 'a1b2c3d4', 1, 'there');
    await new Promise((r) => setTimeout(r, 20));
    expect(sim.turns).toEqual([]);
    c.send(FrameType.END, 'a1b2c3d4', 2);
    const reply = await c.waitReply('a1b2c3d4');
    expect(sim.turns).toEqual([
      { conn: 1, taskId: 'a1b2c3d4', text: 'hi there', audio: Buffer.alloc(0) },
    ]);
    expect(reply.map((f) => [f.type, f.seq])).toEqual([
      [FrameType.TEXT, 0],
      [FrameType.TEXT, 1],
      [FrameType.TEXT, 2],
      [FrameType.EMOJI, 0],
      [FrameType.END, 3],
    ]);
    expect(textOf(reply)).toBe('Hello, how are you?');
    expect(JSON.parse(reply[3]!.payload.toString())).toEqual({ emoji: 'happy' });
    expect(sim.violations).toEqual([]);
  });

  it('collects a voice turn from AUDIO_FRAMEs, and flags seq gaps and reused task ids', async () => {
    const sim = await start({ demo: false });
    const c = await client(sim);
    c.auth();
    c.send(FrameType.AUDIO, 'voice001', 0, Buffer.from([1, 2, 3, 4]));
    c.send(FrameType.AUDIO, 'voice001', 2, Buffer.from([5, 6]));
    c.send(FrameType.END, 'voice001', 3);
    c.send(FrameType.TEXT, 'voice001', 0, 'again');
    c.send(FrameType.END, 'empty001', 0);
    await sim.waitFor((f) => f.taskId === 'empty001');
    expect(sim.turns).toEqual([
      { conn: 1, taskId: 'voice001', text: '', audio: Buffer.from([1, 2, 3, 4, 5, 6]) },
    ]);
    expect(sim.violations).toEqual([
      "conn 1: AUDIO_FRAME on task 'voice001' has seq 2, expected 1",
      "conn 1: TEXT on task 'voice001' after its END_FRAME (a turn needs a fresh task id)",
      "conn 1: END_FRAME on task 'empty001' with no TEXT or AUDIO_FRAME before it",
    ]);
  });

  it('cuts a multi-byte character across TEXT frames with splitUtf8', async () => {
    const sim = await start({ splitUtf8: true });
    const c = await client(sim);
    c.auth();
    const peer = await sim.waitForConnection();
    await peer.text('t1', ['现在是', '下午三点']);
    await peer.end('t1');
    const reply = await c.waitReply('t1      ');
    const texts = reply.filter((f) => f.type === FrameType.TEXT);
    expect(texts).toHaveLength(4);
    expect(texts.map((f) => f.seq)).toEqual([0, 1, 2, 3]);
    expect(texts.some((f) => f.payload.toString('utf8').includes('\ufffd'))).toBe(true);
    expect(textOf(reply)).toBe('现在是下午三点');
  });

  it('one-byte write mode still yields exactly the frames a normal write would', async () => {
    const sim = await start();
    const c = await client(sim);
    c.auth();
    const peer = await sim.waitForConnection();
    peer.writeMode = 'one-byte';
    const pcm = Buffer.from(Array.from({ length: 700 }, (_, i) => i & 0xff));
    void peer.text('t2', ['one ', 'byte']);
    void peer.audio('t2', pcm, 300);
    void peer.emoji('t2', 'thinking');
    await peer.end('t2');
    const reply = await c.waitReply('t2      ');
    expect(reply.map((f) => f.type)).toEqual([
      FrameType.TEXT,
      FrameType.TEXT,
      FrameType.AUDIO,
      FrameType.AUDIO,
      FrameType.AUDIO,
      FrameType.EMOJI,
      FrameType.END,
    ]);
    expect(textOf(reply)).toBe('one byte');
    expect(
      Buffer.concat(reply.filter((f) => f.type === FrameType.AUDIO).map((f) => f.payload)),
    ).toEqual(pcm);
    expect(c.issues).toEqual([]);
  });

  it('garbage between frames costs the client nothing but resynchronisation', async () => {
    const sim = await start({ garbageBetweenFrames: true });
    const c = await client(sim);
    c.auth();
    const peer = await sim.waitForConnection();
    for (let i = 0; i < 10; i++) void peer.status(`##INFO:${i}`);
    await c.waitFrame(status('##INFO:9'));
    expect(c.frames.map((f) => f.payload.toString())).toEqual(
      Array.from({ length: 10 }, (_, i) => `##INFO:${i}`),
    );
    expect(c.issues.length).toBeGreaterThan(0);
    expect(c.issues.every((i) => i.kind === 'garbage')).toBe(true);
  });

  it('sends audio whose payload holds ##END and ##START raw, and the codec still splits it right', async () => {
    const sim = await start();
    const c = await client(sim);
    c.auth();
    const peer = await sim.waitForConnection();
    const payloads = await peer.audioWithMarkers('t3');
    await peer.end('t3');
    const reply = await c.waitReply('t3      ');
    const audio = reply
      .filter((f) => f.type === FrameType.AUDIO)
      .map((f) => Buffer.from(f.payload));
    expect(audio).toEqual(payloads);
    expect(payloads.every((p) => p.includes('##END') || p.includes('##START'))).toBe(true);
  });

  it('sends an unknown frame type and an oversized frame for the client to skip', async () => {
    const sim = await start();
    const c = await client(sim, { maxFrameBytes: 1024 });
    c.auth();
    const peer = await sim.waitForConnection();
    void peer.unknownTypeFrame();
    void peer.oversizedFrame(4096);
    await peer.status('##INFO:after');
    await c.waitFrame(status('##INFO:after'));
    expect(c.frames).toHaveLength(1);
    expect(c.issues.map((i) => i.kind)).toEqual(['unknown_type', 'frame_too_large']);
  });

  it('dropMidTurn sends part of a reply, then the connection vanishes', async () => {
    const sim = await start();
    const c = await client(sim);
    c.auth();
    const peer = await sim.waitForConnection();
    await peer.dropMidTurn('t4');
    await c.waitClose();
    expect(textOf(c.frames)).toBe('This reply stops here');
    expect(c.frames.some((f) => f.type === FrameType.END)).toBe(false);
    await sim.waitForClose(1);
  });

  it('sends LISTEN as JSON and raw bytes as given', async () => {
    const sim = await start();
    const c = await client(sim);
    c.auth();
    const peer = await sim.waitForConnection();
    void peer.listen('vad00001', 'stop', 'vad');
    void peer.sendRaw(encodeFrame(FrameType.STATUS, SYSTEM_TASK, 0, '##INFO:raw'));
    await c.waitFrame(status('##INFO:raw'));
    expect(c.frames[0]).toMatchObject({ type: FrameType.LISTEN, taskId: 'vad00001', seq: 0 });
    expect(JSON.parse(c.frames[0]!.payload.toString())).toEqual({
      taskid: 'vad00001',
      type: 'listen',
      state: 'stop',
      mode: 'vad',
    });
  });
});

describe('AdventSim: lifecycle', () => {
  const { start, client } = useSim();

  it('stop() closes the server and every socket, clears every timer and fails waiters', async () => {
    const sim = await start({ idleTimeoutMs: 60_000, callTimeoutMs: 60_000 });
    const a = await client(sim);
    const b = await client(sim);
    a.auth();
    b.auth();
    await sim.waitFor((f) => f.type === FrameType.AUTH && f.conn === 2);
    const call = expect(sim.peer(1).call('get_current_time')).rejects.toThrow(
      /connection 1 closed before the result/,
    );
    const waiting = expect(sim.waitFor(() => false, 60_000)).rejects.toThrow('AdventSim stopped');
    expect(sim.pendingTimers).toBeGreaterThan(0);
    expect(sim.openSockets).toBe(2);

    await sim.stop();
    expect(sim.listening).toBe(false);
    expect(sim.openSockets).toBe(0);
    expect(sim.openConnections).toBe(0);
    expect(sim.pendingTimers).toBe(0);
    await call;
    await waiting;
    await Promise.all([a.waitClose(), b.waitClose()]);
    await sim.stop(); // twice is fine
  });

  it('counts connections and waits for the next one', async () => {
    const sim = await start();
    expect(sim.connections).toBe(0);
    const next = sim.waitForConnection(2);
    await client(sim);
    await client(sim);
    await expect(next).resolves.toMatchObject({ conn: 2 });
    expect(sim.connections).toBe(2);
    expect(() => sim.peer(3)).toThrow('AdventSim has no connection 3 (2 so far)');
  });

  it('reports a turn handler that throws instead of crashing', async () => {
    const sim = await start();
    sim.onTurn(() => {
      throw new Error('script bug');
    });
    const c = await client(sim);
    c.auth();
    c.textTurn('a0000001', 'hello');
    await sim.waitFor((f) => f.type === FrameType.END);
    await new Promise((r) => setTimeout(r, 10));
    expect(sim.errors.map((e) => e.message)).toEqual(['script bug']);
  });
});
