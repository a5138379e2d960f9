/**
 * Voice on a robot session (protocols/robot-rpc.md, Transport): 16 kHz s16le mono PCM both ways,
 * as raw binary WebSocket frames. Up, the UI's chunks (any size) are sent in 20–60 ms frames
 * between `mcp/audio/start_stream` and `mcp/audio/end_stream`; down, PCM frames follow
 * `mcp/server/start_audio` until an empty frame ends the playback.
 */

import type { UploadClosed } from '../kit/voice-upload.js';

/** 16 kHz s16 mono: 32 bytes per ms. */
export const PCM_RATE = 16_000;
export const PCM_BYTES_PER_MS = 32;
const MIN_FRAME = 20 * PCM_BYTES_PER_MS;
const MAX_FRAME = 60 * PCM_BYTES_PER_MS;

/** One voice upload. It knows when it is over, so nothing is sent for a closed turn. */
export class VoiceUpload {
  closedBecause: UploadClosed | undefined;
  private pending: Buffer = Buffer.alloc(0);

  constructor(readonly taskId: string) {}

  get open(): boolean {
    return this.closedBecause === undefined;
  }

  /** Whole frames ready to send (none while less than 20 ms is waiting). */
  push(pcm: Uint8Array): Buffer[] {
    this.pending = Buffer.concat([this.pending, pcm]);
    const out: Buffer[] = [];
    while (this.pending.length >= MAX_FRAME) out.push(this.take(MAX_FRAME));
    if (this.pending.length >= MIN_FRAME) out.push(this.take(this.pending.length & ~1));
    return out;
  }

  /** What is still held back, in whole samples (the last frame may be shorter than 20 ms). */
  flush(): Buffer[] {
    const bytes = this.pending.length & ~1;
    const out = bytes > 0 ? [this.take(bytes)] : [];
    this.pending = Buffer.alloc(0);
    return out;
  }

  close(because: UploadClosed): void {
    this.closedBecause ??= because;
    this.pending = Buffer.alloc(0);
  }

  private take(bytes: number): Buffer {
    const frame = Buffer.from(this.pending.subarray(0, bytes));
    this.pending = this.pending.subarray(bytes);
    return frame;
  }
}

/**
 * Reply audio as it arrives: an odd trailing byte (half a sample) waits for the next frame, so
 * every `audio` event carries whole samples.
 */
export class ReplyAudio {
  private carry: Buffer | undefined;
  private seq = 0;

  /** Whole samples of this frame, with its sequence number; undefined when none are complete. */
  push(frame: Buffer): { seq: number; data: Buffer } | undefined {
    let data = frame;
    if (this.carry) {
      data = Buffer.concat([this.carry, data]);
      this.carry = undefined;
    }
    if (data.length % 2 === 1) {
      this.carry = Buffer.from(data.subarray(data.length - 1));
      data = data.subarray(0, data.length - 1);
    }
    if (!data.length) return undefined;
    return { seq: this.seq++, data: Buffer.from(data) };
  }

  reset(): void {
    this.carry = undefined;
    this.seq = 0;
  }
}
