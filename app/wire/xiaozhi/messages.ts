/**
 * The typed text messages of the XiaoZhi device protocol (protocols/xiaozhi.md B, "Messages"):
 * what the server may send, read liberally (missing fields, numbers as strings, unknown types),
 * and what the device sends, built strictly (always `session_id` after the hello).
 */
import {
  MAX_ID_CHARS,
  MAX_NAME_CHARS,
  MAX_REPLY_CHARS,
  MAX_STATUS_CHARS,
  cutString,
} from '../kit/bounds.js';
import type { ProtocolVersion } from './binary.js';

export type ListenState = 'start' | 'stop' | 'detect';
export type ListenMode = 'auto' | 'manual' | 'realtime';

/** What the device uploads: 16 kHz mono Opus in 60 ms packets. */
export const UPLINK_AUDIO = {
  format: 'opus',
  sample_rate: 16_000,
  channels: 1,
  frame_duration: 60,
} as const;

export type ServerMessage =
  | {
      type: 'hello';
      transport: string | undefined;
      sessionId: string | undefined;
      /** The downlink Opus rate, when the server says it. */
      sampleRate: number | undefined;
    }
  | { type: 'mcp'; sessionId: string | undefined; payload: unknown }
  | { type: 'stt'; text: string }
  | { type: 'llm'; emotion: string | undefined; text: string | undefined }
  | { type: 'tts'; state: string; text: string | undefined }
  | { type: 'alert'; text: string }
  | { type: 'system'; command: string | undefined; raw: Record<string, unknown> }
  | { type: 'custom'; raw: Record<string, unknown> }
  | { type: 'listen'; raw: Record<string, unknown> }
  | { type: 'pong' }
  /** A type this agent does not know (or one it has no use for, e.g. MQTT's `goodbye`). */
  | { type: 'other'; name: string; raw: Record<string, unknown> }
  | { type: 'invalid'; message: string };

/** Read one text frame from the server. Never throws. */
export function parseServerMessage(text: string): ServerMessage {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch (err) {
    return { type: 'invalid', message: `not JSON (${(err as Error).message})` };
  }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg))
    return { type: 'invalid', message: 'a message must be a JSON object' };
  const m = msg as Record<string, unknown>;
  if (typeof m.type !== 'string' || !m.type)
    return { type: 'invalid', message: "the message has no 'type'" };
  switch (m.type) {
    case 'hello': {
      const params = isRecord(m.audio_params) ? m.audio_params : {};
      const rate = Number(params.sample_rate);
      return {
        type: 'hello',
        // Quoted in the refusal when it is not 'websocket'.
        transport: cut(str(m.transport)),
        sessionId: idString(m.session_id),
        sampleRate: Number.isFinite(rate) && rate > 0 ? rate : undefined,
      };
    }
    case 'mcp':
      if (!isRecord(m.payload))
        return { type: 'invalid', message: "an 'mcp' message needs an object 'payload'" };
      return { type: 'mcp', sessionId: idString(m.session_id), payload: m.payload };
    case 'stt':
      return { type: 'stt', text: cutString(str(m.text) ?? '', MAX_REPLY_CHARS) };
    case 'llm':
      // Either becomes the mood the timeline shows and keeps: a face, never a document.
      return { type: 'llm', emotion: cut(str(m.emotion)), text: cut(str(m.text)) };
    case 'tts':
      if (typeof m.state !== 'string')
        return { type: 'invalid', message: "a 'tts' message needs a 'state'" };
      // An unknown state is quoted in a warning: a name, never a document.
      return { type: 'tts', state: cutString(m.state, MAX_NAME_CHARS), text: str(m.text) };
    case 'alert': {
      // Firmware reads `status` (a title), `message` and `emotion`; some servers send `text`.
      const parts = [str(m.status), str(m.message) ?? str(m.text)].filter((p): p is string => !!p);
      // Shown as a notice and quoted in a log line, both kept by the timeline.
      const text = parts.join(': ') || 'alert from the server (no text)';
      return { type: 'alert', text: cutString(text, MAX_STATUS_CHARS) };
    }
    case 'system':
      return { type: 'system', command: cut(str(m.command)), raw: m };
    case 'custom':
      return { type: 'custom', raw: m };
    case 'listen':
      return { type: 'listen', raw: m };
    case 'pong':
      return { type: 'pong' };
    default:
      return { type: 'other', name: cutString(m.type, MAX_NAME_CHARS), raw: m };
  }
}

// --- what the device sends -------------------------------------------------------------------

export function deviceHello(version: ProtocolVersion): Record<string, unknown> {
  return {
    type: 'hello',
    version,
    transport: 'websocket',
    features: { mcp: true },
    audio_params: { ...UPLINK_AUDIO },
  };
}

export function listenMessage(
  sessionId: string,
  state: ListenState,
  extra: { mode?: ListenMode; text?: string } = {},
): Record<string, unknown> {
  return {
    session_id: sessionId,
    type: 'listen',
    state,
    ...(extra.mode ? { mode: extra.mode } : {}),
    ...(extra.text !== undefined ? { text: extra.text } : {}),
  };
}

export function abortMessage(sessionId: string, reason?: string): Record<string, unknown> {
  return { session_id: sessionId, type: 'abort', ...(reason ? { reason } : {}) };
}

export function mcpMessage(sessionId: string, payload: unknown): Record<string, unknown> {
  return { session_id: sessionId, type: 'mcp', payload };
}

export function pingMessage(sessionId: string): Record<string, unknown> {
  return { session_id: sessionId, type: 'ping' };
}

// --- moods -----------------------------------------------------------------------------------

/** The emotions the firmware has faces for, as emoji (the open-source backend's table). */
export const EMOTION_EMOJI: Readonly<Record<string, string>> = {
  neutral: '😶',
  happy: '🙂',
  laughing: '😆',
  funny: '😂',
  sad: '😔',
  angry: '😠',
  crying: '😭',
  loving: '😍',
  embarrassed: '😳',
  surprised: '😯',
  shocked: '😱',
  thinking: '🤔',
  winking: '😉',
  cool: '😎',
  relaxed: '😌',
  delicious: '🤤',
  kissy: '😘',
  confident: '😏',
  sleepy: '😴',
  silly: '😜',
  confused: '🙄',
};

/** The emoji to show for an `llm` message: its `text`, else the face for its `emotion`. */
export function moodOf(emotion: string | undefined, text: string | undefined): string | undefined {
  if (text && text.trim()) return text.trim();
  if (!emotion) return undefined;
  return EMOTION_EMOJI[emotion.toLowerCase()] ?? emotion;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Session ids are strings; a server that sends a number still means it. */
/** A session id is echoed in every later message: one no real server would send is not kept. */
function cut(text: string | undefined): string | undefined {
  return text === undefined ? undefined : cutString(text, MAX_NAME_CHARS);
}

function idString(v: unknown): string | undefined {
  if (typeof v === 'string') return v.length <= MAX_ID_CHARS ? v : undefined;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}
