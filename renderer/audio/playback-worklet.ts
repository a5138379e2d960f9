/**
 * The playback AudioWorklet: a queue of float chunks already at the context's rate, started once
 * about 60 ms are buffered (or when no more arrives for 100 ms, for a very short reply), gapless
 * while data keeps coming, silence on an underrun and the same pre-buffering before resuming.
 * `{type:'flush'}` drops everything at once (barge-in). It reports, in source samples, how much
 * has been played, so the page can tell that what arrived was heard.
 */
import { PLAYBACK_PROCESSOR, type WorkletProcessor, type WorkletScope } from './worklet-types.js';

const scope = globalThis as unknown as WorkletScope;

interface Chunk {
  data: Float32Array;
  /** How many source samples this chunk stands for. */
  src: number;
  offset: number;
}

type Message = { type: 'push'; data: Float32Array; src: number } | { type: 'flush' };

class PlaybackProcessor extends scope.AudioWorkletProcessor implements WorkletProcessor {
  private queue: Chunk[] = [];
  private buffered = 0;
  private playing = false;
  private waitingSince = 0;
  private played = 0;
  private lastReport = 0;
  private readonly prebuffer = Math.round(scope.sampleRate * 0.06);
  private readonly maxWait = Math.round(scope.sampleRate * 0.1);

  constructor() {
    super();
    this.port.onmessage = (ev: MessageEvent<Message>) => {
      const msg = ev.data;
      if (msg.type === 'push') {
        if (this.queue.length === 0 && !this.playing) this.waitingSince = scope.currentFrame;
        this.queue.push({ data: msg.data, src: msg.src, offset: 0 });
        this.buffered += msg.data.length;
      } else if (msg.type === 'flush') {
        this.queue = [];
        this.buffered = 0;
        this.playing = false;
        this.report(true);
      }
    };
  }

  process(_inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    const out = outputs[0];
    const first = out?.[0];
    if (!out || !first) return true;
    const frames = first.length;
    if (!this.playing && this.buffered > 0) {
      const waited = scope.currentFrame - this.waitingSince;
      if (this.buffered >= this.prebuffer || waited >= this.maxWait) this.playing = true;
    }
    let written = 0;
    if (this.playing) {
      while (written < frames && this.queue.length > 0) {
        const chunk = this.queue[0]!;
        const n = Math.min(frames - written, chunk.data.length - chunk.offset);
        first.set(chunk.data.subarray(chunk.offset, chunk.offset + n), written);
        chunk.offset += n;
        written += n;
        this.buffered -= n;
        this.played += (n * chunk.src) / chunk.data.length;
        if (chunk.offset >= chunk.data.length) this.queue.shift();
      }
      if (this.queue.length === 0) {
        // Drained (the reply ended, or an underrun): wait for the pre-buffer again.
        this.playing = false;
        this.waitingSince = scope.currentFrame;
        this.report(true);
      }
    }
    first.fill(0, written);
    for (let c = 1; c < out.length; c++) out[c]!.set(first);
    this.report(false);
    return true;
  }

  private report(now: boolean): void {
    if (!now && scope.currentFrame - this.lastReport < scope.sampleRate * 0.05) return;
    this.lastReport = scope.currentFrame;
    this.port.postMessage({
      type: 'state',
      played: Math.round(this.played),
      buffered: this.buffered,
      playing: this.playing,
    });
  }
}

scope.registerProcessor(PLAYBACK_PROCESSOR, PlaybackProcessor);
