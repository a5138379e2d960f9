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

/** `refused`: the agent answers but will not take this page's key; only a new address helps. */
export type BridgeStatus = 'connecting' | 'open' | 'closed' | 'refused';

export interface Bridge {
  invoke<K extends CommandName>(method: K, ...args: CommandArgs<K>): Promise<CommandResults[K]>;
  on<E extends EventName>(name: E, cb: (payload: EventPayloads[E]) => void): () => void;
  /** Voice chunks up (16 kHz s16le PCM), without a reply. */
  sendAudio?(pcm: ArrayBuffer): void;
  readonly status: BridgeStatus;
  onStatus(cb: (status: BridgeStatus) => void): () => void;
  /**
   * Called with a fresh snapshot each time the bridge is (re)connected, so the UI rebuilds its
   * state from the core after any gap in the event stream.
   */
  onReady(cb: (snapshot: Snapshot) => void): () => void;
  close(): void;
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
