import type { Timing } from '../../app/wire/advent/connection.js';

/** Everything the terminal host touches outside itself, injected so tests can drive it in-process. */
export interface CliIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Called on Ctrl-C / SIGTERM; returns an unsubscribe function. */
  onSignal(handler: () => void): () => void;
  dataDir(): string;
  filesRoot(): string;
  version: string;
  /** Connection timing overrides (tests). */
  timing?: Partial<Timing>;
}
