/**
 * The playback AudioWorklet: reply audio already at the context's rate, played through the
 * adaptive jitter buffer (jitter-buffer.ts) — it starts on the first chunk and waits longer only
 * once the link has shown it jitters. `{type:'flush'}` drops everything at once (barge-in). It
 * reports, in source samples, how much has been played, so the page can tell that what arrived
 * was heard, with the buffer's underruns and start delay.
 */
import { JitterBuffer } from './jitter-buffer.js';
import { PLAYBACK_PROCESSOR, type WorkletProcessor, type WorkletScope } from './worklet-types.js';

const scope = globalThis as unknown as WorkletScope;

type Message = { type: 'push'; data: Float32Array; src: number } | { type: 'flush' };

class PlaybackProcessor extends scope.AudioWorkletProcessor implements WorkletProcessor {
  private readonly buffer = new JitterBuffer({ rate: scope.sampleRate });
  private wasPlaying = false;
  private lastReport = 0;

  constructor() {
    super();
    this.port.onmessage = (ev: MessageEvent<Message>) => {
      const msg = ev.data;
      if (msg.type === 'push') this.buffer.push(msg.data, msg.src, scope.currentFrame);
      else if (msg.type === 'flush') {
        this.buffer.flush();
        this.report(true);
      }
    };
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
