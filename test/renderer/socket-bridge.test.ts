import { afterEach, describe, expect, it } from 'vitest';
import { encodeAudioFrame, type Snapshot } from '../../app/contract/index.js';
import {
  createSocketBridge,
  reconnectDelay,
  type SocketLike,
} from '../../renderer/bridge/socket.js';
import type { Bridge, BridgeStatus } from '../../renderer/bridge/types.js';
import { BridgeError } from '../../renderer/bridge/types.js';

class FakeSocket implements SocketLike {
  binaryType = 'blob';
  readyState = 0;
  readonly sent: (string | ArrayBuffer)[] = [];
  closedWith: number | undefined;
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: { code?: number; reason?: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;

  constructor(readonly url: string) {}

  send(data: string | ArrayBuffer): void {
    if (this.readyState !== 1) throw new Error('not open');
    this.sent.push(data);
  }
  close(code?: number): void {
    this.closedWith = code;
    this.readyState = 3;
  }
  // --- driven by the test
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
  receive(data: unknown): void {
    this.onmessage?.({
      data:
        typeof data === 'object' && !(data instanceof ArrayBuffer) ? JSON.stringify(data) : data,
    });
  }
  drop(): void {
    this.readyState = 3;
    this.onclose?.({ code: 1006 });
  }
  calls(): { id: number; method: string; args: unknown[] }[] {
    return this.sent
      .filter((f): f is string => typeof f === 'string')
      .map((f) => JSON.parse(f) as { id: number; method: string; args: unknown[] });
  }
}

function harness() {
  const sockets: FakeSocket[] = [];
  const timers: { fn: () => void; ms: number }[] = [];
  const bridge = createSocketBridge({
    url: 'ws://127.0.0.1:1234/bridge?token=t0k',
    open: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
    setTimer: (fn, ms) => {
      const t = { fn, ms };
      timers.push(t);
      return t;
    },
    clearTimer: (h) => {
      const at = timers.indexOf(h as { fn: () => void; ms: number });
      if (at >= 0) timers.splice(at, 1);
    },
    random: () => 0.5,
  });
  const socket = () => sockets[sockets.length - 1] as FakeSocket;
  const fire = () => timers.shift()?.fn();
  return { bridge, sockets, timers, socket, fire };
}

/** Answer the snapshot every (re)open asks for. */
function answerSnapshot(s: FakeSocket, snap: Partial<Snapshot> = {}): void {
  const call = s.calls().find((c) => c.method === 'snapshot');
  if (call) s.receive({ t: 'result', id: call.id, ok: true, value: { version: 'x', ...snap } });
}

const flush = () => new Promise((r) => setTimeout(r, 0));

let open: Bridge | undefined;
afterEach(() => open?.close());

describe('socket bridge', () => {
  it('connects to the given url in arraybuffer mode and fetches a snapshot once open', async () => {
    const h = harness();
    open = h.bridge;
    const statuses: BridgeStatus[] = [];
    h.bridge.onStatus((s) => statuses.push(s));
    const snaps: unknown[] = [];
    h.bridge.onReady((s) => snaps.push(s));
    expect(h.socket().url).toBe('ws://127.0.0.1:1234/bridge?token=t0k');
    expect(h.socket().binaryType).toBe('arraybuffer');
    expect(h.bridge.status).toBe('connecting');
    h.socket().open();
    expect(statuses).toEqual(['open']);
    expect(h.socket().calls()).toEqual([{ t: 'call', id: 1, method: 'snapshot', args: [] }]);
    answerSnapshot(h.socket());
    await flush();
    expect(snaps).toEqual([{ version: 'x' }]);
  });

  it('delivers exactly one result per call id, and ignores late duplicates', async () => {
    const h = harness();
    open = h.bridge;
    h.socket().open();
    const p = h.bridge.invoke('sendText', 'hi');
    const call = h
      .socket()
      .calls()
      .find((c) => c.method === 'sendText');
    expect(call).toMatchObject({ method: 'sendText', args: ['hi'] });
    h.socket().receive({ t: 'result', id: call?.id, ok: true, value: { taskId: 'a' } });
    h.socket().receive({ t: 'result', id: call?.id, ok: true, value: { taskId: 'b' } });
    await expect(p).resolves.toEqual({ taskId: 'a' });
  });

  it("rejects with the core's message when a command fails", async () => {
    const h = harness();
    open = h.bridge;
    h.socket().open();
    const p = h.bridge.invoke('connect', 'p1');
    const call = h
      .socket()
      .calls()
      .find((c) => c.method === 'connect');
    h.socket().receive({
      t: 'result',
      id: call?.id,
      ok: false,
      error: { code: 'failed', message: "no token is saved for 'Home'; add one first" },
    });
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect(err).toMatchObject({
      code: 'failed',
      message: "no token is saved for 'Home'; add one first",
    });
  });

  it('rejects pending calls with a clear error when the socket closes, then reconnects with backoff', async () => {
    const h = harness();
    open = h.bridge;
    h.socket().open();
    const p = h.bridge.invoke('verifyAudit');
    h.socket().drop();
    const err = await p.catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'connection_lost' });
    expect((err as Error).message).toMatch(/lost before 'verifyAudit' finished/);
    expect(h.bridge.status).toBe('closed');
    expect(h.timers).toHaveLength(1);
    expect(h.timers[0]?.ms).toBe(reconnectDelay(0, () => 0.5));

    // A second failure waits longer.
    h.fire();
    expect(h.sockets).toHaveLength(2);
    expect(h.bridge.status).toBe('connecting');
    h.socket().drop();
    expect(h.timers[0]?.ms).toBeGreaterThan(reconnectDelay(0, () => 0.5));

    // Back: a fresh snapshot is fetched and handed to the UI.
    const snaps: unknown[] = [];
    h.bridge.onReady((s) => snaps.push(s));
    h.fire();
    h.socket().open();
    answerSnapshot(h.socket(), { version: 'again' });
    await flush();
    expect(snaps).toEqual([{ version: 'again' }]);
    expect(h.bridge.status).toBe('open');
  });

  it('refuses calls at once while not connected', async () => {
    const h = harness();
    open = h.bridge;
    await expect(h.bridge.invoke('snapshot')).rejects.toMatchObject({ code: 'not_connected' });
  });

  it('routes events by name and stops after unsubscribe', () => {
    const h = harness();
    open = h.bridge;
    h.socket().open();
    const got: unknown[] = [];
    const off = h.bridge.on('notice', (n) => got.push(n));
    h.socket().receive({ t: 'event', name: 'notice', payload: { level: 'info', message: 'a' } });
    h.socket().receive({ t: 'event', name: 'bogus', payload: {} });
    h.socket().receive('not json at all');
    off();
    h.socket().receive({ t: 'event', name: 'notice', payload: { level: 'info', message: 'b' } });
    expect(got).toEqual([{ level: 'info', message: 'a' }]);
  });

  it('decodes binary frames as audio events and sends audio as binary', () => {
    const h = harness();
    open = h.bridge;
    h.socket().open();
    const got: { taskId: string; seq: number; pcm: ArrayBuffer }[] = [];
    h.bridge.on('audio', (a) => got.push(a));
    const pcm = new Uint8Array([1, 2, 3, 4]).buffer;
    const frame = encodeAudioFrame({
      connection: 'c',
      taskId: 't1',
      seq: 3,
      sampleRate: 16000,
      pcm,
    });
    h.socket().receive(frame.buffer.slice(frame.byteOffset, frame.byteOffset + frame.byteLength));
    h.socket().receive(new ArrayBuffer(2)); // too short: ignored
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ taskId: 't1', seq: 3 });
    expect([...new Uint8Array(got[0]?.pcm ?? new ArrayBuffer(0))]).toEqual([1, 2, 3, 4]);

    const up = new Uint8Array([9, 9]).buffer;
    h.bridge.sendAudio?.(up);
    expect(h.socket().sent.at(-1)).toBe(up);
  });

  it('close() stops reconnecting and rejects what is pending', async () => {
    const h = harness();
    h.socket().open();
    const p = h.bridge.invoke('snapshot');
    h.bridge.close();
    await expect(p).rejects.toMatchObject({ code: 'connection_lost' });
    expect(h.socket().closedWith).toBe(1000);
    expect(h.timers).toHaveLength(0);
    expect(h.bridge.status).toBe('closed');
  });
});

describe('reconnectDelay', () => {
  it('grows exponentially with jitter and is capped', () => {
    expect(reconnectDelay(0, () => 0.5)).toBe(250);
    expect(reconnectDelay(3, () => 0.5)).toBe(2000);
    expect(reconnectDelay(30, () => 0.5)).toBe(10_000);
    expect(reconnectDelay(30, () => 1)).toBe(12_000);
    expect(reconnectDelay(30, () => 0)).toBe(8000);
  });
});
