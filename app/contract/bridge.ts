/**
 * The browser host's bridge (DESIGN §4): the contract's commands and events as messages over one
 * WebSocket on 127.0.0.1. Text frames carry JSON; binary frames carry audio (voice chunks up,
 * reply PCM down) so audio never goes through JSON. Pure TS: both ends import this.
 *
 *   URL:    ws://127.0.0.1:<port>/bridge?token=<per-launch token>   (Origin must be the page's)
 *   up:     {"t":"call","id":7,"method":"sendText","args":["hi"]}     → exactly one "result"
 *           binary frame = voiceChunk(bytes) (no reply; errors come back as a notice event)
 *   down:   {"t":"result","id":7,"ok":true,"value":{…}} | {"t":"result","id":7,"ok":false,"error":{code,message}}
 *           {"t":"event","name":"chat","payload":{…}}
 *           binary frame = audio event: 4-byte big-endian header length, JSON header
 *           {connection,taskId,seq,sampleRate}, then the PCM bytes
 */
import type { CommandError, EventName, EventPayloads } from './commands.js';

export const BRIDGE_PATH = '/bridge';

export type BridgeUp = { t: 'call'; id: number; method: string; args: unknown[] };

export type BridgeDown =
  | { t: 'result'; id: number; ok: true; value: unknown }
  | { t: 'result'; id: number; ok: false; error: CommandError }
  | { t: 'event'; name: Exclude<EventName, 'audio'>; payload: unknown };

export type AudioHeader = Omit<EventPayloads['audio'], 'pcm'>;

export function encodeAudioFrame(event: EventPayloads['audio']): Uint8Array {
  const { pcm, ...header } = event;
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(4 + json.byteLength + pcm.byteLength);
  new DataView(out.buffer).setUint32(0, json.byteLength, false);
  out.set(json, 4);
  out.set(new Uint8Array(pcm), 4 + json.byteLength);
  return out;
}

export function decodeAudioFrame(frame: ArrayBuffer): EventPayloads['audio'] | undefined {
  if (frame.byteLength < 4) return undefined;
  const len = new DataView(frame).getUint32(0, false);
  if (4 + len > frame.byteLength) return undefined;
  try {
    const header = JSON.parse(
      new TextDecoder().decode(new Uint8Array(frame, 4, len)),
    ) as AudioHeader;
    return { ...header, pcm: frame.slice(4 + len) };
  } catch {
    return undefined;
  }
}
