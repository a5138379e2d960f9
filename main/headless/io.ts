import type { Timing } from '../../app/wire/advent/link.js';
import type { Dialect } from '../../app/wire/dialect.js';
import type { WsTiming } from '../../app/wire/kit/ws-dialer.js';

/** Everything the command-line hosts touch outside itself, injected so tests can drive it in-process. */
export interface CliIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Called on Ctrl-C / SIGTERM; returns an unsubscribe function. */
  onSignal(handler: () => void): () => void;
  dataDir(): string;
  filesRoot(): string;
  version: string;
  /** How long end of input waits for unsent lines and unanswered replies (default 30 s). */
  drainTimeoutMs?: number;
  /** How long one turn may wait for its reply before the next line goes (default 60 s). */
  turnTimeoutMs?: number;
  /** Connection timing overrides (tests): Advent TCP and the WebSocket dialects. */
  timing?: Partial<Timing>;
  wsTiming?: Partial<WsTiming>;
  /** The built renderer `ui` serves (default: dist/renderer of this package). */
  rendererDir?: string;
  /** Opens a URL in the user's browser; rejects with the reason it could not (`ui --open`). */
  openUrl?: (url: string) => Promise<void>;
  /** The connection kinds (default: every kind the app ships); tests add their own. */
  dialects?: readonly Dialect[];
}
