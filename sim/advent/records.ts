import type { KnownFrameType } from '../../app/wire/advent/frame.js';
import type { CallResult } from './checks.js';
import type { SimPeer } from './peer.js';

/** One frame the client sent, as the simulator saw it. */
export interface ReceivedFrame {
  conn: number;
  type: KnownFrameType;
  /** The 8 task id bytes as received, padding included. */
  taskId: string;
  seq: number;
  payload: Buffer;
  /** UTF-8 text of every frame but AUDIO_FRAME. */
  text?: string;
  /** Parsed JSON of MCP, LISTEN and EMOJI frames, when it parses. */
  json?: unknown;
  /** The injected clock's time when the frame was decoded. */
  at: number;
}

/**
 * A finished input turn: TEXT and/or AUDIO_FRAMEs on one task, then END_FRAME — or, hands-free,
 * the audio heard until the simulated VAD said stop.
 */
export interface Turn {
  conn: number;
  taskId: string;
  text: string;
  /** The user's audio as PCM s16le 16 kHz mono (Opus uploads decoded). */
  audio: Buffer;
  /** With `input_audio_format:opus`: the AUDIO_FRAME payloads as received. */
  opus?: Buffer;
  /** Ended by the simulated VAD (`mode:vad` or `auto`) rather than END_FRAME. */
  vad?: 'vad' | 'auto';
}

export type TurnHandler = (turn: Turn, peer: SimPeer) => void | Promise<void>;

/**
 * How the simulator answers AUTH. The real server's success text is unknown, so `accept` sends
 * nothing unless a welcome is configured. `ignore` models a hung server: it records what arrives
 * and answers nothing at all on that connection (no PONG, no replies).
 */
export type AuthDecision = 'accept' | 'silent-close' | 'ignore' | { reject: string };
export type AuthMode =
  AuthDecision | ((token: string, params: Record<string, string>) => AuthDecision);

/** What happened, for logs (the CLI prints one line per event). */
export type SimEvents = {
  connection: { conn: number; remote: string };
  auth: { conn: number; token: string; params: Record<string, string>; decision: AuthDecision };
  register: { conn: number; services: string[] };
  turn: { conn: number; taskId: string; text: string; audioBytes: number };
  call: { conn: number; callId: string; method: string; params: unknown };
  result: { conn: number; callId: string; result: CallResult };
  status: { conn: number; text: string };
  violation: { conn: number; message: string };
  idle: { conn: number; ms: number };
  close: { conn: number };
  /** A turn handler or auth function threw; conn 0: the listening server itself failed. */
  error: { conn: number; error: Error };
};
