/**
 * Where reply audio spends its time between the simulator's write and the page's player, for the
 * voice latency bench (voice-latency.ts): every reply chunk is stamped at each hop, wall-clock ms
 * (`performance.timeOrigin + performance.now()`) on both sides.
 *
 *   written  the simulator's write of the AUDIO_FRAME (the bench's own send loop)
 *   core     the core's Advent link has decoded it (AdventLink's frame handler, wrapped here)
 *   bridge   the browser host's bridge socket sends it to the page (`ws` send, wrapped here)
 *   page     the page's bridge worker gets it from its WebSocket (the worker stamps it:
 *            renderer/audio/reply-router.ts); with the socket in the page, a listener the output
 *            tap's init script adds
 *   player   it is posted to the playback worklet (by the worker, wherever it was decided; or
 *            MessagePort.postMessage in the page, ditto)
 *
 * Nothing in the app changes for this. A chunk's lateness at a hop is how far behind the reply's
 * own pace it got there (its time less the reply's first chunk's there, less 20 ms per chunk
 * before it): the player runs dry only when lateness at the player outgrows its start delay, and
 * the hop where a late chunk first became late says whose stall it was (the simulator's timer on
 * this busy machine, the core, the host, or the page).
 */
import { WebSocket as WsSocket } from 'ws';
import { AdventLink } from '../../app/wire/advent/link.js';
import { FrameType } from '../../app/wire/advent/frame.js';
import { type Latency, latency } from './stats.js';

export const HOPS = ['written', 'core', 'bridge', 'page', 'player'] as const;
export type Hop = (typeof HOPS)[number];

/** One stamp: the reply's task (trimmed) and when. */
export interface Stamp {
  task: string;
  at: number;
}

const wallNow = (): number => performance.timeOrigin + performance.now();
/** Stamps kept per hop (16 replies of 30 chunks, two pages: far below). */
const MAX_STAMPS = 20_000;

/** Wraps the core's hops for the bench's duration; `restore` unwraps them. */
export function hookCoreHops(): {
  core: Stamp[];
  /** Per bridge socket (one per page). */
  bridge: Map<unknown, Stamp[]>;
  restore(): void;
} {
  const core: Stamp[] = [];
  const bridge = new Map<unknown, Stamp[]>();
  type Handler = (conn: unknown, frame: { type: number; taskId: string }) => void;
  const link = AdventLink.prototype as unknown as { onFrame: Handler };
  const onFrame = link.onFrame;
  link.onFrame = function (this: unknown, conn, frame) {
    if (frame.type === FrameType.AUDIO && core.length < MAX_STAMPS)
      core.push({ task: frame.taskId.trim(), at: wallNow() });
    return onFrame.call(this, conn, frame);
  };
  type Send = (data: unknown, ...rest: unknown[]) => void;
  const ws = WsSocket.prototype as unknown as { send: Send };
  const send = ws.send;
  ws.send = function (this: unknown, data, ...rest) {
    const task = data instanceof Uint8Array ? audioTask(data) : undefined;
    if (task !== undefined) {
      let list = bridge.get(this);
      if (!list) bridge.set(this, (list = []));
      if (list.length < MAX_STAMPS) list.push({ task, at: wallNow() });
    }
    return send.call(this, data, ...rest);
  };
  return {
    core,
    bridge,
    restore() {
      link.onFrame = onFrame;
      ws.send = send;
    },
  };
}

/** The task of a bridge audio frame (app/contract/bridge.ts: u32 header length, JSON, PCM). */
function audioTask(frame: Uint8Array): string | undefined {
  if (frame.byteLength < 4) return undefined;
  const len = new DataView(frame.buffer, frame.byteOffset).getUint32(0, false);
  try {
    const header = JSON.parse(Buffer.from(frame.subarray(4, 4 + len)).toString('utf8')) as {
      taskId?: unknown;
    };
    return typeof header.taskId === 'string' ? header.taskId.trim() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The page's half, as plain JS for the output tap's init script (it runs before the app): stamps
 * in `window.__benchHops.page` and `.player`. A chunk is posted to the player in the same task
 * that received it, so the player stamp takes the task of the last frame received.
 */
export const PAGE_HOPS_JS = `
  const hops = { page: [], player: [] };
  window.__benchHops = hops;
  const wall = () => performance.timeOrigin + performance.now();
  const taskOf = (buf) => {
    try {
      const len = new DataView(buf).getUint32(0, false);
      return JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 4, len))).taskId.trim();
    } catch {
      return '?';
    }
  };
  let lastTask = '?';
  const PageSocket = window.WebSocket;
  const Stamped = function (...args) {
    const ws = new PageSocket(...args);
    ws.addEventListener('message', (ev) => {
      if (!(ev.data instanceof ArrayBuffer) || hops.page.length >= ${MAX_STAMPS}) return;
      lastTask = taskOf(ev.data);
      hops.page.push({ task: lastTask, at: wall() });
    });
    return ws;
  };
  Stamped.prototype = PageSocket.prototype;
  Object.assign(Stamped, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
  window.WebSocket = Stamped;
  const post = MessagePort.prototype.postMessage;
  MessagePort.prototype.postMessage = function (msg, ...rest) {
    if (msg && msg.type === 'push' && hops.player.length < ${MAX_STAMPS})
      hops.player.push({ task: lastTask, at: wall() });
    return post.call(this, msg, ...rest);
  };
`;

/** Every reply's chunks at every hop, in order. */
export type HopStamps = Record<Hop, Stamp[]>;

export interface HopReport {
  /** Each hop's time from the one before, the first chunk of each reply. */
  first: Record<Exclude<Hop, 'written'>, Latency>;
  /** The same over every chunk. */
  all: Record<Exclude<Hop, 'written'>, Latency>;
  /** Lateness behind the reply's own pace at each hop, every chunk after the first. */
  lateness: Record<Hop, Latency>;
  /** Per reply (task), the most any chunk was behind its pace at each hop, ms. */
  worst: Map<string, Record<Hop, number>>;
}

function byTask(list: readonly Stamp[]): Map<string, number[]> {
  const m = new Map<string, number[]>();
  for (const s of list) {
    let l = m.get(s.task);
    if (!l) m.set(s.task, (l = []));
    l.push(s.at);
  }
  return m;
}

/**
 * Of the bridge sockets, the one that served the page whose stamps are `page`: the one whose
 * sends came soonest before that page's arrivals.
 */
export function pickBridge(bridges: Iterable<Stamp[]>, page: readonly Stamp[]): Stamp[] {
  const arrivals = byTask(page);
  let best: { list: Stamp[]; score: number } = { list: [], score: Number.POSITIVE_INFINITY };
  for (const list of bridges) {
    const gaps: number[] = [];
    for (const [task, sends] of byTask(list)) {
      const got = arrivals.get(task) ?? [];
      sends.forEach((at, i) => {
        if (got[i] !== undefined) gaps.push(got[i]! - at);
      });
    }
    const score = gaps.length ? latency(gaps).p50 : Number.POSITIVE_INFINITY;
    if (score >= -0.5 && score < best.score) best = { list, score };
  }
  return best.list;
}

export function hopReport(stamps: HopStamps, chunkMs: number): HopReport {
  const tasks = byTask(stamps.written);
  const at = Object.fromEntries(HOPS.map((h) => [h, byTask(stamps[h])])) as Record<
    Hop,
    Map<string, number[]>
  >;
  const later = HOPS.slice(1) as Array<Exclude<Hop, 'written'>>;
  const first = Object.fromEntries(later.map((h) => [h, [] as number[]])) as Record<
    Exclude<Hop, 'written'>,
    number[]
  >;
  const all = Object.fromEntries(later.map((h) => [h, [] as number[]])) as typeof first;
  const late = Object.fromEntries(HOPS.map((h) => [h, [] as number[]])) as Record<Hop, number[]>;
  const worst = new Map<string, Record<Hop, number>>();
  for (const [task, written] of tasks) {
    const w = Object.fromEntries(HOPS.map((h) => [h, Number.NaN])) as Record<Hop, number>;
    for (let i = 0; i < written.length; i++) {
      HOPS.forEach((hop, k) => {
        const t = at[hop].get(task) ?? [];
        if (t[i] === undefined) return;
        if (k > 0) {
          const before = at[HOPS[k - 1]!].get(task)?.[i];
          if (before !== undefined) {
            const d = t[i]! - before;
            all[hop as Exclude<Hop, 'written'>].push(d);
            if (i === 0) first[hop as Exclude<Hop, 'written'>].push(d);
          }
        }
        if (i > 0 && t[0] !== undefined) {
          const behind = t[i]! - t[0]! - i * chunkMs;
          late[hop].push(behind);
          if (!(behind <= w[hop])) w[hop] = behind;
        }
      });
    }
    worst.set(task, w);
  }
  const lat = <K extends string>(r: Record<K, number[]>) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, latency(v as number[])])) as Record<
      K,
      Latency
    >;
  return { first: lat(first), all: lat(all), lateness: lat(late), worst };
}
