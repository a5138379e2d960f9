/**
 * What every live connection offers, whatever its dialect (DESIGN §2: only `app/wire/<dialect>/`
 * differs). The agent and the hosts talk to sessions through this interface; a dialect that has
 * no chat or no voice (the XiaoZhi MCP endpoint) says so in `capabilities` and refuses those
 * calls with a clear message instead of pretending.
 */
import type {
  ConnectionCapabilities,
  ConnectionState,
  RegistrationState,
} from '../contract/connection.js';
import type { McpToolHint } from '../contract/mcp.js';
import type { Risk } from '../contract/policy.js';
import type { CallRequest, DispatchResult } from '../dispatch.js';
import type { Emitter } from '../events.js';

/** The one gate, as a session sees it. */
export interface Gate {
  dispatch(call: CallRequest): Promise<DispatchResult>;
}

export type SessionKind = 'advent' | 'xiaozhi' | 'endpoint' | 'robot';

/** A service as a server is told about it; `inputSchema` already flattened for servers. */
export interface ToolEntry {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  risk: Risk;
  /** Listed only to servers that ask for user tools (XiaoZhi `withUserTools`). */
  userOnly: boolean;
  /** For people: the service's title (MCP clients show it). */
  title?: string;
  /** An imported tool: what its server claims about it (MCP annotations), as imported. */
  hint?: McpToolHint;
  /** An imported tool's declared output schema. */
  outputSchema?: Record<string, unknown>;
}

export type SessionEvents = {
  state: ConnectionState;
  registration: RegistrationState;
  /** A piece of the assistant's reply text. */
  replyDelta: { taskId: string; text: string };
  /** The reply of this turn is complete (`text` is the whole reply when the server sent it). */
  replyDone: { taskId: string; text: string };
  /** A newer turn (or a lost link) ended this reply early. */
  replyInterrupted: { taskId: string; text: string };
  /** The AI's reasoning, shown folded under its reply (robot `thought`). */
  thought: { taskId: string; text: string };
  /** What the server heard the user say (XiaoZhi `stt`): replaces the voice bubble's label. */
  transcript: { taskId: string; text: string };
  mood: { taskId: string; emoji: string };
  /** Reply audio, always PCM s16le mono at `sampleRate` (default 16000). */
  audio: { taskId: string; seq: number; data: Buffer; sampleRate?: number };
  /** Server-side listening state (`state: start | detecting | stop`) for the mic button. */
  listen: { taskId: string; message: unknown };
  /** Text the server wants the user to see (STATUS, XiaoZhi `alert`/`system`): a timeline notice. */
  status: string;
  /** A line worth logging: odd frames, dropped results, protocol trouble. Never contains secrets. */
  log: { level: 'info' | 'warn'; message: string };
  tokenExpiring: { expiresAt: number };
};

export type SendResult = { ok: true; taskId: string } | { ok: false; message: string };
/** `ignored`: the server already ended this input (VAD stop), so a late chunk is dropped. */
export type ChunkResult = { ok: true; ignored?: true } | { ok: false; message: string };

export type SessionCapabilities = ConnectionCapabilities;

export interface LiveSession {
  /** The profile kind (a dialect's own name; not limited to the kinds the app ships). */
  readonly kind: string;
  /** The profile id: what identifies this connection everywhere. */
  readonly id: string;
  readonly name: string;
  readonly events: Emitter<SessionEvents>;
  readonly state: ConnectionState;
  readonly registrationState: RegistrationState;
  readonly capabilities: SessionCapabilities;
  start(): void;
  /** Say goodbye where the dialect has a way to, and leave no socket or timer behind. */
  stop(): Promise<void>;
  /** The enabled services changed: tell the server the whole set again, the dialect's way. */
  reregister(): void;
  sendText(text: string): SendResult;
  speak(text: string): SendResult;
  voiceStart(): SendResult;
  /** s16le 16 kHz mono PCM; the session adapts it to the server's format. */
  voiceChunk(taskId: string, pcm: Uint8Array): ChunkResult;
  voiceEnd(taskId: string): ChunkResult;
  voiceCancel(taskId?: string): void;
  /** Barge-in: the reply being played stops and its late audio is dropped. */
  interrupt(): void;
}

/** The refusal for a turn on a link that cannot carry it now. */
export function notReady(state: ConnectionState): string {
  switch (state.status) {
    case 'ready':
      return 'ready';
    case 'reconnecting':
      return `not connected (reconnecting: ${state.lastError})`;
    case 'offline':
      return `not connected (${state.message})`;
    default:
      return `not connected yet (${state.status})`;
  }
}

/** The refusal for what a dialect cannot do at all. */
export function unsupported(kind: SessionKind, what: string): string {
  const names: Record<SessionKind, string> = {
    advent: 'an Advent server',
    xiaozhi: 'a XiaoZhi server',
    endpoint: 'a XiaoZhi MCP endpoint',
    robot: 'a robot server',
  };
  return `${what} is not possible on ${names[kind]} connection`;
}
