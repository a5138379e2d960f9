/**
 * The bridge with its socket in a worker (renderer/bridge/worker-core.ts on the worker's side,
 * worker-socket.ts on the page's), the two ends joined by queues as postMessage would, over a
 * fake WebSocket.
 */
import { describe, expect, it } from 'vitest';
import { encodeAudioFrame } from '../../app/contract/index.js';
import { createSocketBridge, type SocketLike } from '../../renderer/bridge/socket.js';
import { serveBridgeWorker, type WorkerScopeLike } from '../../renderer/bridge/worker-core.js';
import type { FromWorker, ToWorker } from '../../renderer/bridge/worker-messages.js';
import { createWorkerLine, type WorkerLike } from '../../renderer/bridge/worker-socket.js';

class FakeSocket implements SocketLike {
  binaryType = 'blob';
  readyState = 0;
  readonly sent: (string | ArrayBuffer)[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: { code?: number; reason?: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  constructor(readonly url: string) {}
  send(data: string | ArrayBuffer): void {
    this.sent.push(data);
  }
  close(): void {
    this.readyState = 3;
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
}

function audioFrame(taskId: string): ArrayBuffer {
  const bytes = encodeAudioFrame({
    connection: { id: 'c', name: 'c' },
    taskId,
    seq: 0,
    sampleRate: 16_000,
    pcm: new Int16Array(320).fill(1000).buffer,
  } as never);
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** Page and worker joined by two queues, delivered when `deliver` runs (as an event loop would). */
function rig() {
  const sockets: FakeSocket[] = [];
  const pageSockets: string[] = [];
  const toWorker: ToWorker[] = [];
  const toPage: FromWorker[] = [];
  const scope: WorkerScopeLike = {
    postMessage: (m) => void toPage.push(m),
    onmessage: null,
  };
  serveBridgeWorker(
    scope,
    (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
    () => 0,
  );
  const worker: WorkerLike = {
    postMessage: (m) => void toWorker.push(m),
    onmessage: null,
    onerror: null,
  };
  const line = createWorkerLine(worker, (url) => {
    pageSockets.push(url);
    return new FakeSocket(url);
  });
  const deliver = (): void => {
    while (toWorker.length || toPage.length) {
      while (toWorker.length) scope.onmessage?.({ data: toWorker.shift()! });
      while (toPage.length) worker.onmessage?.({ data: toPage.shift()! });
    }
  };
  const bridge = createSocketBridge({
    url: 'ws://127.0.0.1:1/bridge?token=t',
    open: (url) => line.open(url),
    replies: line.replies,
    setTimer: () => 0,
    clearTimer: () => {},
  });
  deliver();
  return { sockets, pageSockets, worker, line, bridge, deliver, toWorker, toPage };
}

describe('bridge worker', () => {
  it('the socket opens in the worker with the page’s URL; calls and results cross it', async () => {
    const h = rig();
    const s = h.sockets[0]!;
    expect(s.url).toBe('ws://127.0.0.1:1/bridge?token=t');
    expect(s.binaryType).toBe('arraybuffer');
    s.open();
    h.deliver();
    expect(h.bridge.status).toBe('open');
    const result = h.bridge.invoke('sendText', 'hi');
    h.deliver();
    const call = (s.sent as string[])
      .map((f) => JSON.parse(f))
      .find((c) => c.method === 'sendText');
    expect(call).toMatchObject({ t: 'call', args: ['hi'] });
    s.onmessage?.({
      data: JSON.stringify({ t: 'result', id: call.id, ok: true, value: { taskId: 'x' } }),
    });
    h.deliver();
    await expect(result).resolves.toEqual({ taskId: 'x' });
  });

  it("an approved reply's audio goes to the player without an audio event in the page; the page hears of it after", () => {
    const h = rig();
    const s = h.sockets[0]!;
    s.open();
    const pushed: unknown[] = [];
    h.line.replies.attachPlayer({ postMessage: (m) => void pushed.push(m) }, 16_000);
    h.line.replies.policy({ taskId: 't1', listening: false });
    const events: string[] = [];
    h.bridge.on('audio', (a) => events.push(a.taskId));
    const direct: string[] = [];
    h.line.replies.onDirect((a) => direct.push(a.taskId));
    h.deliver();
    s.onmessage?.({ data: audioFrame('t1') });
    h.deliver();
    expect(pushed).toHaveLength(1);
    expect(events).toEqual([]);
    expect(direct).toEqual(['t1']);
  });

  it("other audio reaches the page's listeners; what they play goes back before the worker hears it was handled", () => {
    const h = rig();
    const s = h.sockets[0]!;
    s.open();
    const pushed: unknown[] = [];
    h.line.replies.attachPlayer({ postMessage: (m) => void pushed.push(m) }, 16_000);
    h.line.replies.policy({ taskId: undefined, listening: true });
    h.deliver();
    h.bridge.on('audio', (a) => {
      h.line.replies.policy({ taskId: a.taskId, listening: false });
      h.line.replies.push(a.taskId, a.sampleRate, a.pcm);
    });
    s.onmessage?.({ data: audioFrame('t2') });
    // The worker passed it on; the page's answer is queued in order: push, then handled.
    while (h.toPage.length) h.worker.onmessage?.({ data: h.toPage.shift()! });
    expect(h.toWorker.map((m) => m.type)).toEqual(['policy', 'push', 'handled']);
    h.deliver();
    expect(pushed.length).toBeGreaterThanOrEqual(1);
  });

  it('a worker that fails closes its socket; the bridge then reconnects with a socket in the page and plays audio itself', () => {
    const h = rig();
    h.sockets[0]!.open();
    h.deliver();
    const statuses: string[] = [];
    h.bridge.onStatus((st) => statuses.push(st));
    h.worker.onerror?.(new Error('script refused'));
    expect(statuses).toContain('closed');
    expect(h.line.replies.active).toBe(false);
    expect(h.line.open('ws://127.0.0.1:1/bridge?token=t')).toBeInstanceOf(FakeSocket);
    expect(h.pageSockets).toEqual(['ws://127.0.0.1:1/bridge?token=t']);
  });
});
