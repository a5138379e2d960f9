/**
 * The capture AudioWorklet: microphone (any rate, any channel count) → mono → 16 kHz s16le,
 * posted as 20 ms chunks (640 bytes, transferred) with the chunk's RMS level for the meter.
 * `{type:'stop'}` makes it post `{type:'stopped'}` after the last full chunk, so the page knows
 * every chunk has been delivered before it ends the turn. Loaded by URL from the same origin
 * (the Electron CSP forbids blob: scripts).
 */
import { Resampler, floatToS16, rms } from './resample.js';
import {
  CAPTURE_PROCESSOR,
  CAPTURE_RATE,
  CHUNK_SAMPLES,
  type WorkletProcessor,
  type WorkletScope,
} from './worklet-types.js';

const scope = globalThis as unknown as WorkletScope;

class CaptureProcessor extends scope.AudioWorkletProcessor implements WorkletProcessor {
  private readonly resampler = new Resampler(scope.sampleRate, CAPTURE_RATE);
  private chunk = new Float32Array(CHUNK_SAMPLES);
  private filled = 0;
  private stopped = false;

  constructor() {
    super();
    this.port.onmessage = (ev: MessageEvent<{ type?: string }>) => {
      if (ev.data?.type === 'stop' && !this.stopped) {
        this.stopped = true;
        this.port.postMessage({ type: 'stopped' });
      }
    };
  }

  process(inputs: Float32Array[][]): boolean {
    if (this.stopped) return false;
    const channels = inputs[0];
    const first = channels?.[0];
    if (!channels || !first) return true;
    let mono = first;
    if (channels.length > 1) {
      mono = new Float32Array(first.length);
      for (const ch of channels) for (let i = 0; i < ch.length; i++) mono[i]! += ch[i] ?? 0;
      for (let i = 0; i < mono.length; i++) mono[i]! /= channels.length;
    }
    const out = this.resampler.process(mono);
    for (let i = 0; i < out.length; i++) {
      this.chunk[this.filled++] = out[i] ?? 0;
      if (this.filled === CHUNK_SAMPLES) {
        const pcm = floatToS16(this.chunk);
        this.port.postMessage({ type: 'chunk', pcm: pcm.buffer, level: rms(this.chunk) }, [
          pcm.buffer,
        ]);
        this.chunk = new Float32Array(CHUNK_SAMPLES);
        this.filled = 0;
      }
    }
    return true;
  }
}

scope.registerProcessor(CAPTURE_PROCESSOR, CaptureProcessor);
