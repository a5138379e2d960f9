/**
 * What the page and its bridge worker (bridge-worker.ts) say to each other. The worker owns the
 * bridge's WebSocket, so reply audio reaches the playback worklet without waiting for the page's
 * main thread (busy rendering the reply's text just when the reply's first audio arrives). Pure
 * types: no DOM.
 */

/** The end of a MessagePort that the worker posts on (the playback worklet's side listens). */
export interface PortLike {
  postMessage(message: unknown, transfer: ArrayBuffer[]): void;
}

/**
 * The voice controller's rules for reply audio, as the worker needs them: the reply playing,
 * whether the user is talking (push-to-talk: other replies wait), and a reply just interrupted
 * (never played again). A reply nobody announced takes over when the user is not talking.
 */
export interface ReplyPolicy {
  taskId: string | undefined;
  listening: boolean;
  block?: string;
}

/** Page → worker. */
export type ToWorker =
  /** Open socket `id` (a new one replaces any other: one bridge socket at a time). */
  | { type: 'open'; id: number; url: string }
  | { type: 'send'; id: number; data: string | ArrayBuffer }
  | { type: 'close'; id: number; code?: number; reason?: string }
  /** The playback worklet's port and the context's rate: reply audio may now go straight there. */
  | { type: 'player'; port: PortLike; rate: number }
  /** What the page's voice controller plays now (see ReplyPolicy). */
  | ({ type: 'policy' } & ReplyPolicy)
  /** The page has handled one audio frame the worker passed to it (played or dropped it). */
  | { type: 'handled'; taskId: string }
  /** Reply audio the page decided to play (s16le mono at `sampleRate`). */
  | { type: 'push'; taskId: string; sampleRate: number; pcm: ArrayBuffer }
  /** Drop everything queued (barge-in), after whatever was posted before. */
  | { type: 'flush' };

/** Worker → page. */
export type FromWorker =
  | { type: 'open'; id: number }
  /** A frame for the page; `taskId` marks reply audio the page must answer with 'handled'. */
  | { type: 'message'; id: number; data: string | ArrayBuffer; taskId?: string }
  | { type: 'close'; id: number; code: number; reason: string }
  /** Reply audio played without the page: its samples (at their own rate), for its state. */
  | ({ type: 'direct' } & DirectNotice);

/**
 * A chunk the worker played. `superseded`: it began a reply nobody announced, so the worker
 * flushed the player and blocked the reply it replaces (undefined if none), as the page would.
 */
export interface DirectNotice {
  taskId: string;
  samples: number;
  sampleRate: number;
  at: number;
  superseded?: { previous: string | undefined };
}
