/**
 * The page's side of the bridge worker (bridge-worker.ts): sockets that live in the worker, seen
 * by the socket bridge (socket.ts) as plain SocketLikes, and the worker's line to the player
 * (a ReplyLink). Should the worker fail (its script refused, a crash), the socket open at the time
 * closes, the next one is an ordinary WebSocket in the page, and the line reports itself inactive
 * so the page plays reply audio itself. No DOM here: the worker is injected.
 */
import type { SocketLike } from './socket.js';
import type { DirectAudio, PlayerPort, ReplyLink } from './types.js';
import type { FromWorker, ToWorker } from './worker-messages.js';

/** The part of a Worker used here (the DOM's Worker fits). */
export interface WorkerLike {
  postMessage(message: ToWorker, transfer?: unknown[]): void;
  onmessage: ((ev: { data: FromWorker }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

export interface WorkerLine {
  /** A bridge socket: in the worker while it works, in the page once it has failed. */
  open(url: string): SocketLike;
  readonly replies: ReplyLink;
}

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 3;

class WorkerSocket implements SocketLike {
  binaryType = 'arraybuffer';
  readyState = CONNECTING;
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: { code?: number; reason?: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;

  constructor(
    readonly id: number,
    private readonly worker: WorkerLike,
  ) {}

  send(data: string | ArrayBuffer): void {
    if (this.readyState !== OPEN) throw new Error('the bridge socket is not open');
    this.worker.postMessage({ type: 'send', id: this.id, data });
  }

  close(code?: number, reason?: string): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.worker.postMessage({ type: 'close', id: this.id, code, reason });
  }

  /** Closed from the far side (or the worker died): the bridge hears it once. */
  ended(code: number, reason: string): void {
    this.readyState = CLOSED;
    this.onclose?.({ code, reason });
  }
}

export function createWorkerLine(
  worker: WorkerLike,
  fallback: (url: string) => SocketLike,
): WorkerLine {
  let nextId = 1;
  let current: WorkerSocket | undefined;
  let broken = false;
  const direct = new Set<(audio: DirectAudio) => void>();

  worker.onmessage = (ev) => {
    const msg = ev.data;
    if (msg.type === 'direct') {
      const { type: _, ...audio } = msg;
      for (const cb of [...direct]) cb(audio);
      return;
    }
    const s = current;
    if (!s || s.id !== msg.id) return;
    if (msg.type === 'open') {
      if (s.readyState !== CONNECTING) return;
      s.readyState = OPEN;
      s.onopen?.({});
    } else if (msg.type === 'message') {
      if (s.readyState !== OPEN) return;
      try {
        s.onmessage?.({ data: msg.data });
      } finally {
        // Played or dropped by now (the page plays without awaiting): the worker may go on.
        if (msg.taskId !== undefined) worker.postMessage({ type: 'handled', taskId: msg.taskId });
      }
    } else if (msg.type === 'close') {
      current = undefined;
      s.ended(msg.code, msg.reason);
    }
  };
  worker.onerror = () => {
    broken = true;
    const s = current;
    current = undefined;
    s?.ended(1006, 'the bridge worker failed');
  };

  const post = (msg: ToWorker, transfer?: unknown[]): void => {
    if (!broken) worker.postMessage(msg, transfer);
  };

  return {
    open(url) {
      if (broken) return fallback(url);
      const s = new WorkerSocket(nextId++, worker);
      current = s;
      worker.postMessage({ type: 'open', id: s.id, url });
      return s;
    },
    replies: {
      get active() {
        return !broken;
      },
      attachPlayer(port: PlayerPort, rate: number) {
        post({ type: 'player', port, rate }, [port]);
      },
      policy(policy) {
        post({ type: 'policy', ...policy });
      },
      push(taskId, sampleRate, pcm) {
        post({ type: 'push', taskId, sampleRate, pcm }, [pcm]);
      },
      flush() {
        post({ type: 'flush' });
      },
      onDirect(cb) {
        direct.add(cb);
        return () => {
          direct.delete(cb);
        };
      },
    },
  };
}
