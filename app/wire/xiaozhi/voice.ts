/**
 * Voice on a XiaoZhi session (DESIGN §3 Voice): the UI hands over PCM s16le 16 kHz mono and gets
 * PCM back. Up, it becomes 60 ms Opus packets, one per binary frame, wrapped for the protocol
 * version; down, the server's packets are decoded at the rate its hello named.
 */
import { OpusDecoder, OpusEncoder, type OpusRate, isOpusRate } from '../../audio/opus.js';
import { type AudioBudget, overBudgetMessage } from '../kit/audio-budget.js';
import { MIN_OPUS_PACKET_BYTES } from '../kit/bounds.js';
import type { UploadClosed as AnyUploadClosed } from '../kit/voice-upload.js';
import { type ProtocolVersion, encodeAudioFrame } from './binary.js';

const PACKET_MS = 60;

/** A XiaoZhi server's `listen` stop never closes the upload here: never `stopped`. */
export type UploadClosed = Exclude<AnyUploadClosed, 'stopped'>;

/** One voice turn's upload: it knows when it is over, so nothing goes up for a closed turn. */
export class VoiceUpload {
  closedBecause: UploadClosed | undefined;
  private encoder: OpusEncoder | undefined = new OpusEncoder();
  private packets = 0;

  constructor(
    readonly taskId: string,
    private readonly version: ProtocolVersion,
  ) {}

  get open(): boolean {
    return this.closedBecause === undefined;
  }

  /** Binary frames for every whole 60 ms of audio now available (may be none). */
  push(pcm: Uint8Array): Buffer[] {
    return this.wrap(this.encoder?.encodePcm(pcm) ?? []);
  }

  /** The last partial packet, padded with silence. */
  flush(): Buffer[] {
    return this.wrap(this.encoder?.flush() ?? []);
  }

  close(because: UploadClosed): void {
    this.closedBecause ??= because;
    this.encoder?.close();
    this.encoder = undefined;
  }

  private wrap(packets: Buffer[]): Buffer[] {
    return packets.map((p) =>
      // v2 carries the packet's place in the stream, which servers use to line up echo cancelling.
      encodeAudioFrame(this.version, p, { timestampMs: this.packets++ * PACKET_MS }),
    );
  }
}

/** The rate reply audio is decoded at: the server's, or the nearest Opus can produce. */
export function downlinkRate(said: number | undefined): { rate: OpusRate; note?: string } {
  if (said === undefined) return { rate: 16_000 };
  if (isOpusRate(said)) return { rate: said };
  // Opus decodes any packet at any of its rates; pick one and say the PCM is at that rate.
  return {
    rate: 24_000,
    note: `the server announced ${said} Hz audio, which Opus cannot produce; decoding at 24000 Hz`,
  };
}

/**
 * Reply audio of one reply, Opus packets → PCM. A decoder keeps state between packets, so each
 * reply has its own, freed (WASM memory) when the reply ends or is dropped.
 */
export class ReplyAudio {
  private decoder: OpusDecoder | undefined;
  /** Numbers the reply's audio events. */
  seq = 0;
  /** Whether a packet of this reply was dropped already (and so reported). */
  private droppedBefore = false;
  /** Whether the session's audio budget has dropped a packet of this reply already (and so said). */
  private overBefore = false;

  constructor(
    readonly taskId: string,
    readonly rate: OpusRate,
    /** The session's: shared by its replies. */
    private readonly budget: AudioBudget,
  ) {}

  decode(packet: Buffer): { ok: true; pcm: Buffer } | { ok: false; message: string } {
    // No audio fits in it, yet it would decode to up to 120 ms (see bounds.ts): dropped, and
    // said once per reply, since a server sending them sends a flood.
    if (packet.length < MIN_OPUS_PACKET_BYTES) {
      if (this.droppedBefore) return { ok: true, pcm: Buffer.alloc(0) };
      this.droppedBefore = true;
      return {
        ok: false,
        message: `reply '${this.taskId}' has Opus packets shorter than ${MIN_OPUS_PACKET_BYTES} bytes, which hold no audio; they are dropped`,
      };
    }
    // Past the session's budget: dropped, said once per reply (a flood again).
    if (!this.budget.open) {
      if (this.overBefore) return { ok: true, pcm: Buffer.alloc(0) };
      this.overBefore = true;
      return { ok: false, message: overBudgetMessage(this.taskId) };
    }
    try {
      this.decoder ??= new OpusDecoder(this.rate);
      const pcm = this.decoder.decodePacket(packet);
      this.budget.spend(pcm.length, this.rate);
      return { ok: true, pcm };
    } catch (err) {
      // A corrupt packet costs 60 ms, not the reply.
      return {
        ok: false,
        message: `an Opus packet of reply '${this.taskId}' could not be decoded (${(err as Error).message})`,
      };
    }
  }

  close(): void {
    this.decoder?.close();
    this.decoder = undefined;
  }
}
