/**
 * Voice on an Advent session (protocols/advent.md §6.2–6.4; DESIGN §3 Voice): the UI only ever
 * hands us PCM s16le 16 kHz mono and only ever gets PCM back. Here it becomes what the profile
 * asked the server for — PCM in 20–60 ms AUDIO_FRAMEs, or 60 ms Opus packets each behind a 2-byte
 * length — and the server's reply audio becomes PCM again.
 */
import {
  type ByteOrder,
  OpusDecoder,
  OpusEncoder,
  type OpusRate,
  OpusUnframer,
  frameOpusPackets,
} from '../../audio/opus.js';
import type { AudioBudget } from '../kit/audio-budget.js';
import { MAX_REPLY_AUDIO_MS_PER_FRAME, MIN_OPUS_PACKET_BYTES } from '../kit/bounds.js';
import type { UploadClosed } from '../kit/voice-upload.js';
import { nudgePcmMarkers } from './frame.js';

export type AudioFormat = 'pcm' | 'opus';
export type VoiceMode = 'manual' | 'vad' | 'auto';

export interface VoiceOptions {
  /** AUTH `input_audio_format`: what goes up. */
  inputFormat?: AudioFormat;
  /** AUTH `format`: what comes down. */
  outputFormat?: AudioFormat;
  mode?: VoiceMode;
  /** The 2-byte Opus length prefix's byte order (unknown: big-endian is the guess). */
  opusLengthOrder?: ByteOrder;
  /** The rate the server's Opus packets are decoded at (unknown: 16 kHz is the guess). */
  opusDownlinkRate?: OpusRate;
}

/** 16 kHz s16 mono: 32 bytes per ms. PCM goes up in 20–60 ms frames (§6.2). */
export const PCM_BYTES_PER_MS = 32;
const MIN_PCM_FRAME = 20 * PCM_BYTES_PER_MS;
const MAX_PCM_FRAME = 60 * PCM_BYTES_PER_MS;

/**
 * One voice upload under one task id. It turns the UI's chunks (any size) into AUDIO_FRAME
 * payloads and knows when it is over, so nothing is ever sent on a closed task.
 */
export class VoiceUpload {
  /** Why no more audio is taken, once it is over. */
  closedBecause: UploadClosed | undefined;
  /** Received PCM bytes, for the timeline's duration. */
  pcmBytes = 0;
  private nextSeq = 0;
  private pending: Buffer = Buffer.alloc(0);
  private readonly encoder: OpusEncoder | undefined;

  constructor(
    readonly taskId: string,
    private readonly format: AudioFormat,
    private readonly byteOrder: ByteOrder,
    firstSeq = 0,
  ) {
    this.nextSeq = firstSeq;
    this.encoder = format === 'opus' ? new OpusEncoder() : undefined;
  }

  get open(): boolean {
    return this.closedBecause === undefined;
  }

  seq(): number {
    const seq = this.nextSeq;
    this.nextSeq = (this.nextSeq + 1) % 10_000;
    return seq;
  }

  /** Payloads ready to send for this chunk (may be none: a partial frame waits). */
  push(pcm: Uint8Array): Buffer[] {
    this.pcmBytes += pcm.byteLength;
    if (this.encoder) {
      // Every whole 60 ms packet now; several in one frame when the UI sent a long chunk.
      const packets = this.encoder.encodePcm(pcm);
      return packets.length ? [frameOpusPackets(packets, this.byteOrder)] : [];
    }
    this.pending = Buffer.concat([this.pending, pcm]);
    const out: Buffer[] = [];
    while (this.pending.length >= MAX_PCM_FRAME) {
      out.push(this.pcmFrame(MAX_PCM_FRAME));
    }
    if (this.pending.length >= MIN_PCM_FRAME) out.push(this.pcmFrame(this.pending.length & ~1));
    return out;
  }

  /** What is still held back: the last partial Opus frame padded with silence, or short PCM. */
  flush(): Buffer[] {
    if (this.encoder) {
      const packets = this.encoder.flush();
      return packets.length ? [frameOpusPackets(packets, this.byteOrder)] : [];
    }
    const bytes = this.pending.length & ~1;
    return bytes > 0 ? [this.pcmFrame(bytes)] : [];
  }

  close(because: UploadClosed): void {
    this.closedBecause ??= because;
    this.pending = Buffer.alloc(0);
    this.encoder?.close();
  }

  private pcmFrame(bytes: number): Buffer {
    const chunk = nudgePcmMarkers(this.pending.subarray(0, bytes));
    this.pending = this.pending.subarray(bytes);
    return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  }
}

/**
 * Reply audio of one task, Opus → PCM. A decoder keeps state between packets, so each task has
 * its own; `close` frees its WASM memory when the reply ends or is dropped.
 */
export class ReplyAudio {
  private readonly unframer: OpusUnframer;
  private readonly decoder: OpusDecoder;
  /** Whether packets of this reply were dropped already (and so reported). */
  private droppedBefore = false;
  /** Whether the session's audio budget has dropped packets of this reply already (and so said). */
  private overBefore = false;

  constructor(
    byteOrder: ByteOrder,
    readonly rate: OpusRate,
    /** The session's: shared by its replies. */
    private readonly budget: AudioBudget,
  ) {
    this.unframer = new OpusUnframer(byteOrder);
    this.decoder = new OpusDecoder(rate);
  }

  /**
   * PCM for every whole packet in this payload; a packet cut across frames waits for its rest.
   * At most `MAX_REPLY_AUDIO_MS_PER_FRAME` of it, and none from packets too short to hold audio:
   * those are dropped (see bounds.ts), and none past the session's budget (audio-budget.ts). `bad`
   * counts packets that could not be decoded. `dropped` counts the packets left out for their size
   * the first time this reply drops any, so a flood of them is one warning, not one per frame;
   * `over` is true the first time the budget drops packets of this reply.
   */
  push(payload: Uint8Array): { pcm: Buffer; bad: number; dropped: number; over: boolean } {
    const out: Buffer[] = [];
    const maxBytes = ((this.rate * MAX_REPLY_AUDIO_MS_PER_FRAME) / 1000) * 2;
    let bytes = 0;
    let bad = 0;
    let dropped = 0;
    let over = false;
    for (const packet of this.unframer.push(payload)) {
      // Checked before decoding: the last packet kept may pass the cap by its own ≤ 120 ms.
      if (packet.length < MIN_OPUS_PACKET_BYTES || bytes >= maxBytes) {
        dropped += 1;
        continue;
      }
      if (!this.budget.open) {
        over ||= !this.overBefore;
        this.overBefore = true;
        continue;
      }
      try {
        const pcm = this.decoder.decodePacket(packet);
        this.budget.spend(pcm.length, this.rate);
        bytes += pcm.length;
        out.push(pcm);
      } catch {
        // A corrupt packet (or a byte-order guess that is wrong) costs 60 ms, not the reply.
        bad += 1;
      }
    }
    if (dropped && this.droppedBefore) dropped = 0;
    else if (dropped) this.droppedBefore = true;
    return { pcm: Buffer.concat(out), bad, dropped, over };
  }

  close(): void {
    this.decoder.close();
  }
}
