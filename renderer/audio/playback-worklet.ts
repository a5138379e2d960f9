/**
 * The playback AudioWorklet: reply audio already at the context's rate, played through the
 * adaptive jitter buffer (jitter-buffer.ts) — it starts on the first chunk and waits longer only
 * once the link has shown it jitters. `{type:'flush'}` drops everything at once (barge-in). It
 * reports, in source samples, how much has been played, so the page can tell that what arrived
 * was heard, with the buffer's underruns and start delay. Audio and flushes come on its own
 * port, or on a port handed over with `{type:'port'}` (the bridge worker's line, which then
 * carries all of them: one line, so a flush comes after everything posted before it).
 */
import { JitterBuffer } from './jitter-buffer.js';
import { PLAYBACK_PROCESSOR, type WorkletProcessor, type WorkletScope } from './worklet-types.js';

const scope = globalThis as unknown as WorkletScope;

type Message =
  | { type: 'push'; data: Float32Array; src: number }
  | { type: 'flush' }
  | { type: 'port'; port: MessagePort };

/** What the page passes in `processorOptions`. */
export interface PlaybackOptions {
  /** The context's baseLatency, ms: how much the audio thread renders at once. */
  burstMs?: number;
}

class PlaybackProcessor extends scope.AudioWorkletProcessor implements WorkletProcessor {
  private readonly buffer: JitterBuffer;
  private wasPlaying = false;
  private lastReport = 0;

  constructor(options?: { processorOptions?: PlaybackOptions }) {
    super();
    const burstMs = options?.processorOptions?.burstMs;
    this.buffer = new JitterBuffer({
      rate: scope.sampleRate,
      burstMs: typeof burstMs === 'number' && Number.isFinite(burstMs) ? burstMs : 0,
    });
    this.port.onmessage = (ev: MessageEvent<Message>) => this.receive(ev.data);
  }

  private receive(msg: Message): void {
    if (msg.type === 'push') this.buffer.push(msg.data, msg.src, scope.currentFrame);
    else if (msg.type === 'flush') {
      this.buffer.flush();
      this.report(true);
    } else if (msg.type === 'port') {
      msg.port.onmessage = (ev: MessageEvent<Message>) => this.receive(ev.data);
    }
  }

  process(_inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    const out = outputs[0];
    const first = out?.[0];
    if (!out || !first) return true;
    this.buffer.render(first, scope.currentFrame);
    for (let c = 1; c < out.length; c++) out[c]!.set(first);
    // A start or a stop is reported at once: the page's "speaking" state follows it.
    this.report(this.buffer.playing !== this.wasPlaying);
    this.wasPlaying = this.buffer.playing;
    return true;
  }

  private report(now: boolean): void {
    if (!now && scope.currentFrame - this.lastReport < scope.sampleRate * 0.05) return;
    this.lastReport = scope.currentFrame;
    const b = this.buffer;
    this.port.postMessage({
      type: 'state',
      played: Math.round(b.played),
      buffered: b.buffered,
      playing: b.playing,
      underruns: b.underruns,
      delayMs: b.delayMs,
      jitterMs: b.jitterMs,
    });
  }
}

scope.registerProcessor(PLAYBACK_PROCESSOR, PlaybackProcessor);
