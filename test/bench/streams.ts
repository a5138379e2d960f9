/**
 * Byte streams for the decoding benchmarks, built once from a seeded generator so every run (and
 * every machine) decodes the same bytes.
 */
import { FrameType, encodeFrame, nudgePcmMarkers } from '../../app/wire/advent/frame.js';

export interface Stream {
  bytes: Buffer;
  frames: number;
  payloadBytes: number;
}

/** xorshift32: deterministic and fast; quality is irrelevant here. */
export function seeded(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x1_0000_0000;
  };
}

/** 20 ms of s16le mono at 16 kHz. */
export const PCM_FRAME_BYTES = 640;
const MARKERS = [Buffer.from('##END'), Buffer.from('##START')];
/** Distinct payloads per stream; frames cycle through them (the decoder cannot tell). */
const POOL = 1024;

/** `count` payloads of voice-like PCM (a sum of tones plus noise), each nudged as a sender must. */
function pcmPool(count: number, payloadBytes: number, rand: () => number): Buffer[] {
  const pool: Buffer[] = [];
  let t = 0;
  for (let k = 0; k < count; k++) {
    const pcm = Buffer.alloc(payloadBytes);
    for (let i = 0; i < payloadBytes / 2; i++, t++) {
      const voice =
        Math.sin(t * 0.057) * 6000 + Math.sin(t * 0.131) * 3000 + Math.sin(t * 0.0091) * 2000;
      const noise = (rand() - 0.5) * 4000;
      pcm.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(voice + noise))), i * 2);
    }
    // About one payload in 40 carries a marker before the nudge, as real audio occasionally does.
    if (rand() < 0.025) {
      const marker = MARKERS[Math.floor(rand() * MARKERS.length)]!;
      marker.copy(pcm, Math.floor(rand() * (payloadBytes - marker.length)));
    }
    const nudged = nudgePcmMarkers(pcm);
    pool.push(Buffer.from(nudged.buffer, nudged.byteOffset, nudged.byteLength));
  }
  return pool;
}

/**
 * AUDIO_FRAMEs of `payloadBytes` PCM (default 640 = 20 ms) until `maxBytes` is reached, whole
 * frames only, as a sender that follows the protocol (§2, robust send) produces them.
 */
export function audioStream(maxBytes: number, seed = 1, payloadBytes = PCM_FRAME_BYTES): Stream {
  const rand = seeded(seed);
  const frameBytes = payloadBytes + 25;
  const count = Math.floor(maxBytes / frameBytes);
  const pool = pcmPool(Math.min(POOL, count), payloadBytes, rand);
  const parts: Buffer[] = [];
  for (let n = 0; n < count; n++) {
    const task = `tts${String(1 + Math.floor(n / 500)).padStart(5, '0')}`;
    parts.push(encodeFrame(FrameType.AUDIO, task, n % 500, pool[n % pool.length]!));
  }
  return { bytes: Buffer.concat(parts), frames: count, payloadBytes: count * payloadBytes };
}

const WORDS = [
  'the',
  'meeting',
  'notes',
  'calendar',
  'weather',
  'tomorrow',
  'reminder',
  'folder',
  'report',
  'summary',
  'please',
  'today',
  'project',
  'review',
];
const CJK = ['好的', '我来帮你', '查一下', '今天', '天气', '文件', '已经', '创建', '会议', '记录'];
const METHODS = ['get_current_time', 'create_file', 'read_file', 'list_files', 'search_notes'];

function sentence(rand: () => number, minBytes: number, maxBytes: number): string {
  const want = minBytes + Math.floor(rand() * (maxBytes - minBytes));
  let out = '';
  while (Buffer.byteLength(out) < want) {
    out +=
      rand() < 0.3
        ? CJK[Math.floor(rand() * CJK.length)]!
        : `${WORDS[Math.floor(rand() * WORDS.length)]!} `;
  }
  return out;
}

/** A `{"type":"call","data":{…}}` payload of roughly 150–400 bytes, as the server sends. */
function mcpCall(rand: () => number, n: number): string {
  const method = METHODS[Math.floor(rand() * METHODS.length)]!;
  const params: Record<string, unknown> =
    method === 'get_current_time'
      ? { format: rand() < 0.5 ? 'simple' : 'detailed', timezone: 'Asia/Shanghai' }
      : method === 'create_file'
        ? {
            path: `notes/2025-01-${String(1 + (n % 28)).padStart(2, '0')} ${sentence(rand, 8, 24).trim()}.md`,
            content: sentence(rand, 60, 260),
            overwrite: false,
          }
        : {
            path: `notes/${sentence(rand, 10, 30).trim()}`,
            query: sentence(rand, 10, 80),
            limit: 20,
          };
  return JSON.stringify({
    type: 'call',
    data: { call_id: `call_${String(n).padStart(6, '0')}`, method, params },
  });
}

/**
 * A reply stream as the server sends it: turns of TEXT pieces (mixed English and Chinese) ending
 * with END_FRAME, interleaved with MCP calls on `mcp00001`, whole frames up to `maxBytes`.
 */
export function textStream(maxBytes: number, seed = 2): Stream {
  const rand = seeded(seed);
  const parts: Buffer[] = [];
  let total = 0;
  let frames = 0;
  let payloadBytes = 0;
  let turn = 1;
  let seq = 0;
  let calls = 0;
  for (;;) {
    let frame: Buffer;
    let payload: number;
    const task = `t${String(turn % 10_000_000).padStart(7, '0')}`;
    const roll = rand();
    if (roll < 0.35) {
      const body = mcpCall(rand, ++calls);
      frame = encodeFrame(FrameType.MCP, 'mcp00001', 0, body);
      payload = Buffer.byteLength(body);
    } else if (roll < 0.9 || seq === 0) {
      const body = sentence(rand, 150, 400);
      frame = encodeFrame(FrameType.TEXT, task, seq++ % 10_000, body);
      payload = Buffer.byteLength(body);
    } else {
      frame = encodeFrame(FrameType.END, task, seq % 10_000);
      payload = 0;
      turn += 1;
      seq = 0;
    }
    if (total + frame.length > maxBytes) break;
    parts.push(frame);
    total += frame.length;
    frames += 1;
    payloadBytes += payload;
  }
  return { bytes: Buffer.concat(parts), frames, payloadBytes };
}

/** Views of `bytes` in chunks of `chunkBytes` (no copies), as a socket would deliver them. */
export function chunked(bytes: Buffer, chunkBytes: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += chunkBytes)
    out.push(bytes.subarray(at, at + chunkBytes));
  return out;
}
