import type { PlatformInfo } from '../../app/mcp-clients/apps.js';
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
  /**
   * How long after a permission question is shown an answer other than "n" is not taken for it
   * (default PROMPT_ARM_MS): a key typed for the question before may not answer a new one.
   */
  promptArmMs?: number;
  /** Connection timing overrides (tests): Advent TCP and the WebSocket dialects. */
  timing?: Partial<Timing>;
  wsTiming?: Partial<WsTiming>;
  /** The built renderer `ui` serves (default: dist/renderer of this package). */
  rendererDir?: string;
  /** Opens a URL in the user's browser; rejects with the reason it could not (`ui --open`). */
  openUrl?: (url: string) => Promise<void>;
  /**
   * Where the other MCP apps keep their config files (`mcp-setup`, Settings): this computer's
   * platform, home folder and environment unless given; tests point them at a temp folder.
   */
  mcpClientPlatform?: Partial<PlatformInfo>;
  /**
   * How those apps start this agent for a data folder (default: this Node and bin/advent-agent.js,
   * headlessMcpLaunch); throwing means it cannot be told.
   */
  mcpLaunch?: (dataDir: string) => { command: string; args: string[] };
  /** The connection kinds (default: every kind the app ships); tests add their own. */
  dialects?: readonly Dialect[];
}
