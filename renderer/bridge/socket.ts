/**
 * The bridge over the browser host's WebSocket (app/contract/bridge.ts wire format), written
 * against a minimal socket shape so tests can drive it with a fake: one result per call id,
 * pending calls rejected when the socket closes, reconnect with backoff, a fresh snapshot after
 * every (re)connect, binary frames decoded as audio events. No DOM here.
 */
import {
  type BridgeDown,
  type BridgeUp,
  type CommandArgs,
  type CommandErrorCode,
  type CommandName,
  type CommandResults,
  decodeAudioFrame,
  type EventName,
  type EventPayloads,
  isEventName,
  type Snapshot,
  readCommandError,
} from '../../app/contract/index.js';
import { type Bridge, BridgeError, type BridgeStatus, type ReplyLink } from './types.js';

/** The part of a WebSocket this bridge uses (the DOM's WebSocket fits). */
export interface SocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: string | ArrayBuffer): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: { code?: number; reason?: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
}

export interface SocketBridgeOptions {
  url: string;
  open: (url: string) => SocketLike;
  /** Injected for tests; default: global timers. */
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
  random?: () => number;
  /** Reconnect delays: min(maxDelayMs, baseDelayMs · 2^attempt) ± 20 %. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  log?: (message: string, detail?: unknown) => void;
  /**
   * Does the page's own server still answer? Asked when a socket closes without ever opening. A
   * browser hides why an upgrade was refused (every failure reads as close code 1006), so a
   * server that serves the page but will not open the bridge means the key is what it refuses.
   */
  serverAnswers?: () => Promise<boolean>;
  /** The sockets' own line to the player, when they live in the bridge worker. */
  replies?: ReplyLink;
}

/** Refusals in a row, with the server answering, before the key is declared wrong (not a blip). */
export const REFUSALS_BEFORE_GIVING_UP = 2;

const OPEN = 1;

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

export function reconnectDelay(
  attempt: number,
  random: () => number,
  base = 250,
  max = 10_000,
): number {
  const raw = Math.min(max, base * 2 ** Math.min(attempt, 16));
  return Math.round(raw * (0.8 + 0.4 * random()));
}

export function createSocketBridge(options: SocketBridgeOptions): Bridge {
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer =
    options.clearTimer ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));
  const random = options.random ?? Math.random;
  const log = options.log ?? (() => {});

  const listeners = new Map<string, Set<(payload: never) => void>>();
  const statusListeners = new Set<(s: BridgeStatus) => void>();
  const readyListeners = new Set<(s: Snapshot) => void>();
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let socket: SocketLike | undefined;
  let status: BridgeStatus = 'connecting';
  let attempt = 0;
  let timer: unknown;
  let closed = false;
  let refusals = 0;

  function setStatus(next: BridgeStatus): void {
    if (next === status) return;
    status = next;
    for (const cb of [...statusListeners]) cb(next);
  }

  function emit(name: string, payload: unknown): void {
    const set = listeners.get(name);
    if (!set) return;
    for (const cb of [...set]) {
      try {
        (cb as (p: unknown) => void)(payload);
      } catch (err) {
        log(`listener of '${name}' failed`, err);
      }
    }
  }

  function failAll(code: CommandErrorCode, message: (method: string) => string): void {
    const calls = [...pending.values()];
    pending.clear();
    for (const p of calls) p.reject(new BridgeError(code, message(p.method)));
  }

  function onMessage(data: unknown): void {
    if (data instanceof ArrayBuffer) {
      const audio = decodeAudioFrame(data);
      if (audio) emit('audio', audio);
      else log('an audio frame could not be read');
      return;
    }
    if (typeof data !== 'string') {
      log('an unexpected frame type arrived', typeof data);
      return;
    }
    let msg: BridgeDown;
    try {
      msg = JSON.parse(data) as BridgeDown;
    } catch {
      log('a frame that is not JSON arrived', data.slice(0, 200));
      return;
    }
    if (!msg || typeof msg !== 'object') return;
    if (msg.t === 'result') {
      const call = pending.get(msg.id);
      if (!call) return; // late or duplicate: the one result was already delivered
      pending.delete(msg.id);
      if (msg.ok) call.resolve(msg.value);
      else {
        const e = readCommandError(msg.error, `'${call.method}' failed`);
        call.reject(new BridgeError(e.code, e.message, e.params));
      }
    } else if (msg.t === 'event') {
      if (isEventName(msg.name) && (msg.name as string) !== 'audio') emit(msg.name, msg.payload);
      else log('an unknown event arrived', msg);
    }
  }

  function connect(): void {
    if (closed) return;
    setStatus('connecting');
    let s: SocketLike;
    try {
      s = options.open(options.url);
    } catch (err) {
      log('the bridge socket could not be opened', err);
      scheduleReconnect();
      return;
    }
    socket = s;
    let opened = false;
    s.binaryType = 'arraybuffer';
    s.onopen = () => {
      if (socket !== s) return;
      opened = true;
      attempt = 0;
      refusals = 0;
      setStatus('open');
      // Events may have been missed while away: rebuild from a fresh snapshot.
      void call('snapshot').then(
        (snap) => {
          for (const cb of [...readyListeners]) cb(snap);
        },
        (err: unknown) => log('snapshot failed', err),
      );
    };
    s.onmessage = (ev) => {
      if (socket === s) onMessage(ev.data);
    };
    s.onerror = () => {
      // A close event always follows; handle everything there.
    };
    s.onclose = () => {
      if (socket !== s) return;
      socket = undefined;
      failAll(
        'connection_lost',
        (m) => `The connection to the agent was lost before '${m}' finished.`,
      );
      if (opened || !options.serverAnswers) {
        scheduleReconnect();
        return;
      }
      setStatus('closed');
      const probe = options.serverAnswers;
      void probe()
        .catch(() => false)
        .then((answers) => {
          if (closed) return;
          refusals = answers ? refusals + 1 : 0;
          if (refusals >= REFUSALS_BEFORE_GIVING_UP) {
            // The key will not change in this page: retrying cannot help, a new address will.
            log("the agent refuses this page's key");
            setStatus('refused');
          } else scheduleReconnect();
        });
    };
  }

  function scheduleReconnect(): void {
    if (closed) {
      setStatus('closed');
      return;
    }
    setStatus('closed');
    const delay = reconnectDelay(
      attempt++,
      random,
      options.baseDelayMs ?? 250,
      options.maxDelayMs ?? 10_000,
    );
    timer = setTimer(() => {
      timer = undefined;
      connect();
    }, delay);
  }

  function call<K extends CommandName>(
    method: K,
    ...args: CommandArgs<K>
  ): Promise<CommandResults[K]> {
    const s = socket;
    if (!s || s.readyState !== OPEN || status !== 'open')
      return Promise.reject(
        new BridgeError('not_connected', 'Not connected to the agent; reconnecting…'),
      );
    const id = nextId++;
    // An optional argument left out is absent, not null (JSON has no undefined).
    const list = [...(args as unknown[])];
    while (list.length && list[list.length - 1] === undefined) list.pop();
    const frame: BridgeUp = { t: 'call', id, method, args: list };
    return new Promise<CommandResults[K]>((resolve, reject) => {
      pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject });
      try {
        s.send(JSON.stringify(frame));
      } catch (err) {
        pending.delete(id);
        reject(new BridgeError('connection_lost', errorText(err)));
      }
    });
  }

  connect();

  return {
    invoke: call,
    on<E extends EventName>(name: E, cb: (payload: EventPayloads[E]) => void): () => void {
      let set = listeners.get(name);
      if (!set) listeners.set(name, (set = new Set()));
      const fn = cb as (payload: never) => void;
      set.add(fn);
      return () => {
        set.delete(fn);
      };
    },
    sendAudio(pcm: ArrayBuffer): void {
      if (socket && socket.readyState === OPEN) socket.send(pcm);
    },
    replies: options.replies,
    get status() {
      return status;
    },
    onStatus(cb) {
      statusListeners.add(cb);
      return () => {
        statusListeners.delete(cb);
      };
    },
    onReady(cb) {
      readyListeners.add(cb);
      return () => {
        readyListeners.delete(cb);
      };
    },
    close(): void {
      closed = true;
      if (timer !== undefined) clearTimer(timer);
      timer = undefined;
      const s = socket;
      socket = undefined;
      failAll('connection_lost', (m) => `The bridge was closed before '${m}' finished.`);
      s?.close(1000, 'closing');
      setStatus('closed');
    },
  };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
