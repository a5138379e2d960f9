/**
 * The renderer's one door to the core (DESIGN §2 renderer/bridge): the same interface over
 * Electron's preload (ipc.ts) and over the browser host's WebSocket (ws.ts). Pure types: no DOM.
 */
import type {
  CommandArgs,
  CommandErrorCode,
  CommandName,
  CommandResults,
  EventName,
  EventPayloads,
  Snapshot,
} from '../../app/contract/index.js';
import type { DirectNotice, ReplyPolicy } from './worker-messages.js';

/** `refused`: the agent answers but will not take this page's key; only a new address helps. */
export type BridgeStatus = 'connecting' | 'open' | 'closed' | 'refused';

export interface Bridge {
  invoke<K extends CommandName>(method: K, ...args: CommandArgs<K>): Promise<CommandResults[K]>;
  on<E extends EventName>(name: E, cb: (payload: EventPayloads[E]) => void): () => void;
  /** Voice chunks up (16 kHz s16le PCM), without a reply. */
  sendAudio?(pcm: ArrayBuffer): void;
  /** Reply audio's own line to the player, where the bridge has one (see ReplyLink). */
  readonly replies?: ReplyLink;
  readonly status: BridgeStatus;
  onStatus(cb: (status: BridgeStatus) => void): () => void;
  /**
   * Called with a fresh snapshot each time the bridge is (re)connected, so the UI rebuilds its
   * state from the core after any gap in the event stream.
   */
  onReady(cb: (snapshot: Snapshot) => void): () => void;
  close(): void;
}

/** Reply audio played without the page's main thread: what the page is told afterwards. */
export type DirectAudio = DirectNotice;
export type { ReplyPolicy };

/** The end of a MessagePort the player listens on (a DOM MessagePort fits). */
export interface PlayerPort {
  postMessage(message: unknown, transfer: ArrayBuffer[]): void;
}

/**
 * A bridge whose reply audio can go to the playback worklet off the page's main thread (the
 * browser host's bridge worker). The page's voice controller approves the reply to play; audio of
 * any other reply still comes to the page as `audio` events, and what the page decides to play
 * goes back through here, so one line feeds the player and order is kept.
 */
export interface ReplyLink {
  /** False when the line is gone (the worker failed): the page plays reply audio itself. */
  readonly active: boolean;
  /** The player's port (transferred) and the output context's rate. */
  attachPlayer(port: PlayerPort, rate: number): void;
  /** What the page plays now; sent whenever it changes. */
  policy(policy: ReplyPolicy): void;
  /** Reply audio the page decided to play (s16le mono), after what the line played itself. */
  push(taskId: string, sampleRate: number, pcm: ArrayBuffer): void;
  /** Barge-in: the player drops everything sent before this. */
  flush(): void;
  /** Each chunk the line played by itself. */
  onDirect(cb: (audio: DirectAudio) => void): () => void;
}

/**
 * A failed command: on the bridge itself, or refused by the core. `code` (+ `params`) is what the
 * UI translates; `message` is the core's English sentence, for logs and unknown codes.
 */
export class BridgeError extends Error {
  constructor(
    readonly code: CommandErrorCode,
    message: string,
    readonly params: Readonly<Record<string, string | number>> = {},
  ) {
    super(message);
    this.name = 'BridgeError';
  }
}

/** The sentence to show for anything a command rejected with. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string')
    return (err as { message: string }).message;
  return String(err);
}
