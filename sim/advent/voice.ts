import {
  type ByteOrder,
  OpusDecoder,
  OpusEncoder,
  OpusUnframer,
  frameOpusPackets,
} from '../../app/audio/opus.js';
import { PCM_BYTES_PER_MS, PCM_RATE } from '../kit/tone.js';

/**
 * The server's ear for one voice turn: keeps what the client uploaded and, for
 * `input_audio_format:opus`, decodes it with the same wrapper the client encodes with, so a test
 * can compare the PCM heard with the PCM said.
 */
export class VoiceInput {
  /** AUDIO_FRAME payloads as received. */
  readonly raw: Buffer[] = [];
  private readonly pcm: Buffer[] = [];
  private pcmBytes = 0;
  private readonly opus: { unframer: OpusUnframer; decoder: OpusDecoder } | undefined;
  /** Opus packets that did not decode (a byte-order mismatch shows up here). */
  badPackets = 0;

  constructor(format: string | undefined, byteOrder: ByteOrder) {
    this.opus =
      format === 'opus'
        ? { unframer: new OpusUnframer(byteOrder), decoder: new OpusDecoder(PCM_RATE) }
        : undefined;
  }

  push(payload: Buffer): void {
    this.raw.push(payload);
    if (!this.opus) {
      this.add(payload);
      return;
    }
    for (const packet of this.opus.unframer.push(payload)) {
      try {
        this.add(this.opus.decoder.decodePacket(packet));
      } catch {
        this.badPackets += 1;
      }
    }
  }

  /** Milliseconds of audio heard so far. */
  get ms(): number {
    return this.pcmBytes / PCM_BYTES_PER_MS;
  }

  /** The PCM heard so far, and a fresh start for the next segment (hands-free `auto`). */
  take(): { pcm: Buffer; raw: Buffer } {
    const out = { pcm: Buffer.concat(this.pcm), raw: Buffer.concat(this.raw) };
    this.pcm.length = 0;
    this.raw.length = 0;
    this.pcmBytes = 0;
    return out;
  }

  get isOpus(): boolean {
    return this.opus !== undefined;
  }

  close(): void {
    this.opus?.decoder.close();
  }

  private add(pcm: Buffer): void {
    this.pcm.push(pcm);
    this.pcmBytes += pcm.length;
  }
}

/** PCM as AUDIO_FRAME payloads of length-prefixed 60 ms Opus packets, `perFrame` packets each. */
export function opusPayloads(pcm: Buffer, byteOrder: ByteOrder, perFrame = 3): Buffer[] {
  const encoder = new OpusEncoder(PCM_RATE);
  try {
    const packets = [...encoder.encodePcm(pcm), ...encoder.flush()];
    const out: Buffer[] = [];
    for (let i = 0; i < packets.length; i += perFrame)
      out.push(frameOpusPackets(packets.slice(i, i + perFrame), byteOrder));
    return out;
  } finally {
    encoder.close();
  }
}
