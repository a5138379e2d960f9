/**
 * One browser page on the WebSocket bridge (app/contract/bridge.ts): it is a UI that can answer
 * permission prompts for as long as it is connected, it gets every event, and its calls go through
 * the same argument checks as Electron's IPC before the agent sees them. A page that breaks the
 * protocol is closed (1003); nothing it sends can throw out of here.
 */
import { WebSocket, type RawData } from 'ws';
import type { EventName, EventPayloads } from '../../app/contract/commands.js';
import { type BridgeDown, encodeAudioFrame } from '../../app/contract/bridge.js';
import { type ServedApi, serveContract } from '../../app/serve.js';

/** What the bridge needs of the core: the contract plus its events and prompt attachment. */
export type BridgeApi = ServedApi;

export interface BridgeSocketOptions {
  /** Where problems worth a line go (a slow page, a socket error). */
  log: (line: string) => void;
  /** Above this many unsent bytes, reply audio for this page is dropped (it is late anyway). */
  audioHighWaterBytes?: number;
  /** Above this many unsent bytes the page is not reading at all: it is disconnected. */
  maxBufferedBytes?: number;
}

export const AUDIO_HIGH_WATER_BYTES = 4 * 1024 * 1024;
export const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/** The same voice error repeats for every chunk of a turn; one notice per this long is enough. */
const VOICE_NOTICE_GAP_MS = 2000;

/** WebSocket close codes (RFC 6455 §7.4.1). */
export const CLOSE_UNSUPPORTED = 1003;
const CLOSE_TRY_LATER = 1013;

export function serveBridgeSocket(
  ws: WebSocket,
  api: BridgeApi,
  options: BridgeSocketOptions,
): void {
  const audioHighWater = options.audioHighWaterBytes ?? AUDIO_HIGH_WATER_BYTES;
  const maxBuffered = options.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
  let droppingAudioLogged = false;
  let lastVoiceNotice = { message: '', at: 0 };

  const open = (): boolean => ws.readyState === WebSocket.OPEN;
  const send = (data: string | Uint8Array): void => {
    if (!open()) return;
    if (ws.bufferedAmount > maxBuffered) {
      options.log(
        `a browser page stopped reading (${ws.bufferedAmount} bytes unsent); disconnecting it`,
      );
      ws.close(CLOSE_TRY_LATER, 'too far behind; reload the page');
      return;
    }
    ws.send(data, { binary: typeof data !== 'string' });
  };
  const sendJson = (message: BridgeDown): void => {
    let text: string;
    try {
      text = JSON.stringify(message);
    } catch (err) {
      // Only a result can fail to serialize; its caller still gets exactly one answer.
      if (message.t !== 'result') return;
      text = JSON.stringify({
        t: 'result',
        id: message.id,
        ok: false,
        error: {
          code: 'failed',
          message: `the result could not be sent: ${(err as Error).message}`,
        },
      } satisfies BridgeDown);
    }
    send(text);
  };
  const notice = (message: string): void =>
    sendJson({ t: 'event', name: 'notice', payload: { level: 'warn', message } });

  // --- events down, calls up: the contract server ----------------------------------------------
  // While the page is connected it can answer permission prompts; its going away detaches it.
  const server = serveContract(api, {
    name: 'browser',
    send(name, payload) {
      if (name !== 'audio') {
        sendJson({ t: 'event', name: name as Exclude<EventName, 'audio'>, payload });
        return;
      }
      // Late audio is useless and piles up fast: drop it rather than let memory grow.
      if (ws.bufferedAmount > audioHighWater) {
        if (!droppingAudioLogged)
          options.log(
            `a browser page is not keeping up (${ws.bufferedAmount} bytes unsent); dropping its reply audio`,
          );
        droppingAudioLogged = true;
        return;
      }
      send(encodeAudioFrame(payload as EventPayloads['audio']));
    },
  });

  const call = async (id: number, method: unknown, args: unknown): Promise<void> => {
    const reply = await server.call(method, args);
    // `void` results still carry the key, so a page can tell "done" from a broken message.
    if (reply.ok) sendJson({ t: 'result', id, ok: true, value: reply.value ?? null });
    else sendJson({ t: 'result', id, ok: false, error: reply.error });
  };

  // A binary frame is a voice chunk: no reply, so a failure comes back as a notice (once per gap).
  const voiceChunk = async (bytes: Uint8Array): Promise<void> => {
    const reply = await server.call('voiceChunk', [bytes]);
    if (reply.ok) return;
    const { message } = reply.error;
    const now = Date.now();
    if (message === lastVoiceNotice.message && now - lastVoiceNotice.at < VOICE_NOTICE_GAP_MS)
      return;
    lastVoiceNotice = { message, at: now };
    notice(`voice not sent: ${message}`);
  };

  ws.on('message', (data, isBinary) => {
    const bytes = toBytes(data);
    if (isBinary) return void voiceChunk(bytes);
    let message: unknown;
    try {
      message = JSON.parse(Buffer.from(bytes).toString('utf8'));
    } catch {
      ws.close(CLOSE_UNSUPPORTED, 'malformed JSON');
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      ws.close(CLOSE_UNSUPPORTED, 'a message must be a JSON object');
      return;
    }
    const { t, id, method, args } = message as Record<string, unknown>;
    if (t !== 'call') {
      ws.close(
        CLOSE_UNSUPPORTED,
        closeReason(`unknown message type ${typeof t === 'string' ? JSON.stringify(t) : typeof t}`),
      );
      return;
    }
    if (typeof id !== 'number' || !Number.isSafeInteger(id)) {
      ws.close(CLOSE_UNSUPPORTED, 'a call needs an integer id');
      return;
    }
    call(id, method, args).catch((err: unknown) =>
      options.log(`a browser call could not be answered: ${(err as Error).message}`),
    );
  });

  ws.on('error', (err) => options.log(`a browser connection failed: ${err.message}`));
  ws.once('close', () => server.dispose());
}

/** WebSocket close reasons are at most 123 bytes of UTF-8 (longer, `ws.close` throws). */
const MAX_CLOSE_REASON_BYTES = 123;

export function closeReason(text: string): string {
  // Every character is at least a byte: cut to that many first, so the loop below is short
  // however long the text (a page's message type can be a megabyte).
  let out = text.slice(0, MAX_CLOSE_REASON_BYTES);
  while (Buffer.byteLength(out) > MAX_CLOSE_REASON_BYTES) out = out.slice(0, -1);
  return out;
}

/** A fresh copy: a received Buffer may be a view into a pooled chunk the socket reuses. */
function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return new Uint8Array(Buffer.concat(data));
  if (data instanceof ArrayBuffer) return new Uint8Array(data.slice(0));
  return new Uint8Array(data);
}
