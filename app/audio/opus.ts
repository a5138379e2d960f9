/**
 * Opus in the core (DESIGN §3 Voice: the renderer only captures and plays PCM). A thin wrapper
 * over `opusscript` (WASM): 16 kHz mono upload in 60 ms packets, as protocols/advent.md §6.2 asks,
 * and decoding at whatever rate the server's packets are meant to be played (16/24/48 kHz).
 *
 * The WASM heap is not garbage-collected: every encoder/decoder must be `close()`d.
 *
 * The AUDIO application, not VOIP: VOIP's speech pre-filter shifts the phase of low voices enough
 * that a round trip no longer lines up with what was said (measured: correlation 0.83 vs 0.99).
 */
import OpusScript from 'opusscript';

export type OpusRate = 8000 | 12000 | 16000 | 24000 | 48000;
export type ByteOrder = 'be' | 'le';

export const UPLOAD_RATE = 16_000;
export const FRAME_MS = 60;

/** Samples in one frame of `ms` at `rate`. */
export const frameSamples = (rate: number, ms = FRAME_MS): number => (rate * ms) / 1000;

/**
 * PCM s16le mono in, 60 ms Opus packets out. Partial frames are kept between calls, because the
 * UI's chunks (20–60 ms, or whatever the sound card gives) rarely line up with Opus frames.
 */
export class OpusEncoder {
  readonly frameBytes: number;
  private codec: OpusScript | undefined;
  private pending: Buffer = Buffer.alloc(0);

  constructor(
    readonly rate: OpusRate = UPLOAD_RATE,
    readonly frameMs = FRAME_MS,
  ) {
    this.codec = new OpusScript(rate, 1, OpusScript.Application.AUDIO);
    this.frameBytes = frameSamples(rate, frameMs) * 2;
  }

  /** Packets for every whole frame now available; the rest waits for the next call or `flush`. */
  encodePcm(pcm: Uint8Array): Buffer[] {
    const codec = this.open();
    let data = this.pending.length
      ? Buffer.concat([this.pending, pcm])
      : Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    const out: Buffer[] = [];
    while (data.length >= this.frameBytes) {
      out.push(codec.encode(data.subarray(0, this.frameBytes), this.frameBytes / 2));
      data = data.subarray(this.frameBytes);
    }
    // Copied: the caller may reuse its buffer.
    this.pending = Buffer.from(data);
    return out;
  }

  /** The last partial frame padded with silence (none when nothing is pending). */
  flush(): Buffer[] {
    if (this.pending.length === 0) return [];
    const padded = Buffer.alloc(this.frameBytes);
    this.pending.copy(padded, 0, 0, this.pending.length - (this.pending.length % 2));
    this.pending = Buffer.alloc(0);
    return [this.open().encode(padded, this.frameBytes / 2)];
  }

  close(): void {
    this.codec?.delete();
    this.codec = undefined;
    this.pending = Buffer.alloc(0);
  }

  private open(): OpusScript {
    if (!this.codec) throw new Error('the Opus encoder is closed');
    return this.codec;
  }
}

/** One Opus packet in, PCM s16le mono at `rate` out. */
export class OpusDecoder {
  private codec: OpusScript | undefined;

  constructor(readonly rate: OpusRate = UPLOAD_RATE) {
    this.codec = new OpusScript(rate, 1, OpusScript.Application.AUDIO);
  }

  decodePacket(packet: Uint8Array): Buffer {
    if (!this.codec) throw new Error('the Opus decoder is closed');
    return this.codec.decode(Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength));
  }

  close(): void {
    this.codec?.delete();
    this.codec = undefined;
  }
}

export function isOpusRate(rate: number): rate is OpusRate {
  return rate === 8000 || rate === 12000 || rate === 16000 || rate === 24000 || rate === 48000;
}

// ---------------------------------------------------------------------------------------------
// Framing (protocol §6.2): each packet preceded by a 2-byte length; the byte order is a guess.

/** Largest length a 2-byte prefix can say; a real Opus packet is far smaller (≤ 1275 per frame). */
const MAX_PREFIXED = 0xffff;

export function frameOpusPackets(
  packets: readonly Uint8Array[],
  byteOrder: ByteOrder = 'be',
): Buffer {
  const total = packets.reduce((n, p) => n + 2 + p.byteLength, 0);
  const out = Buffer.alloc(total);
  let at = 0;
  for (const p of packets) {
    if (p.byteLength > MAX_PREFIXED)
      throw new RangeError(`an Opus packet of ${p.byteLength} bytes`);
    if (byteOrder === 'be') out.writeUInt16BE(p.byteLength, at);
    else out.writeUInt16LE(p.byteLength, at);
    out.set(p, at + 2);
    at += 2 + p.byteLength;
  }
  return out;
}

/**
 * Length-prefixed packets back out of AUDIO_FRAME payloads. The server may cut a packet (or its
 * length) across frames, so what is incomplete is carried to the next `push`.
 */
export class OpusUnframer {
  // What is carried, kept as the pieces it came in: a packet arriving a byte at a time is joined
  // once, when it is whole, not re-copied with every push (quadratic in the packet's length).
  private parts: Buffer[] = [];
  private carried = 0;
  /** Bytes the carried packet needs in all, its prefix included (2 while the prefix is short). */
  private needed = 2;

  constructor(readonly byteOrder: ByteOrder = 'be') {}

  push(bytes: Uint8Array): Buffer[] {
    const incoming = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (this.carried > 0 && this.carried + incoming.length < this.needed) {
      // Copied: the input may be a view into a socket chunk.
      this.parts.push(Buffer.from(incoming));
      this.carried += incoming.length;
      return [];
    }
    let data = this.carried ? Buffer.concat([...this.parts, incoming]) : incoming;
    const out: Buffer[] = [];
    while (data.length >= 2) {
      const len = this.lengthAt(data);
      if (data.length < 2 + len) break;
      out.push(Buffer.from(data.subarray(2, 2 + len)));
      data = data.subarray(2 + len);
    }
    this.parts = data.length ? [Buffer.from(data)] : [];
    this.carried = data.length;
    this.needed = data.length >= 2 ? 2 + this.lengthAt(data) : 2;
    return out;
  }

  /** Bytes still waiting for the rest of their packet. */
  get pendingBytes(): number {
    return this.carried;
  }

  private lengthAt(data: Buffer): number {
    return this.byteOrder === 'be' ? data.readUInt16BE(0) : data.readUInt16LE(0);
  }
}

/** One-shot helper over `OpusUnframer`: `state` carries a split packet between calls. */
export function unframeOpus(
  bytes: Uint8Array,
  byteOrder: ByteOrder = 'be',
  state: OpusUnframer = new OpusUnframer(byteOrder),
): { packets: Buffer[]; state: OpusUnframer } {
  return { packets: state.push(bytes), state };
}
