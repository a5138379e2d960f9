/**
 * REFERENCE ONLY, frozen: the playback AudioWorklet of renderer/audio/playback-worklet.ts as it
 * was before its adaptive jitter buffer (issue 14 item 22; copied from commit 28d02be, code
 * unchanged but for the worklet-scope types and the processor name, inlined so this file is one
 * self-contained module). The voice latency bench (voice-latency.ts) serves it, transpiled, in
 * place of the built worklet to a second page, so the old player and today's are heard on the
 * same replies in one run. Nothing else uses it; do not change it, or the comparison means
 * nothing. One addition, to the transport only: it takes its messages from a port handed over
 * with `{type:'port'}` too (the bridge worker's line, as today's player does), exactly as from
 * its own.
 */
interface WorkletPort {
  onmessage: ((ev: { data: Message }) => void) | null;
  postMessage(message: unknown): void;
}

interface WorkletProcessor {
  readonly port: WorkletPort;
  process(inputs: Float32Array[][], outputs: Float32Array[][]): boolean;
}

interface WorkletScope {
  sampleRate: number;
  currentFrame: number;
  AudioWorkletProcessor: new () => { readonly port: WorkletPort };
  registerProcessor(name: string, ctor: new () => WorkletProcessor): void;
}

const PLAYBACK_PROCESSOR = 'advent-playback';

const scope = globalThis as unknown as WorkletScope;

interface Chunk {
  data: Float32Array;
  /** How many source samples this chunk stands for. */
  src: number;
  offset: number;
}

type Message =
  | { type: 'push'; data: Float32Array; src: number }
  | { type: 'flush' }
  | { type: 'port'; port: WorkletPort };

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
    const receive = (ev: { data: Message }): void => {
      const msg = ev.data;
      if (msg.type === 'port') msg.port.onmessage = receive;
      else if (msg.type === 'push') {
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
    this.port.onmessage = receive;
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

export {};
