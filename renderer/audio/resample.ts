/**
 * A streaming sample-rate converter for mono float audio, shared by the capture worklet
 * (device rate → 16 kHz) and playback (reply rate → the output context's rate). Pure: no DOM, no
 * worklet globals, so it is unit-tested under Node.
 *
 * Downsampling first runs a linear-phase windowed-sinc low-pass (Blackman window) at the input
 * rate with its cutoff just under the output Nyquist, so nothing above it folds back as aliasing;
 * the filtered signal is then read at the output instants by linear interpolation. Upsampling
 * needs no anti-alias filter and interpolates directly. State carries across calls: chunk edges
 * leave no clicks or gaps.
 */
export class Resampler {
  readonly step: number;
  private readonly kernel: Float32Array | undefined;
  private readonly history: Float32Array;
  /** Position of the next output sample, in filtered input samples; -1 is `prev`. */
  private pos = 0;
  private prev = 0;

  constructor(
    readonly inRate: number,
    readonly outRate: number,
    taps = 63,
  ) {
    if (!(inRate > 0 && outRate > 0)) throw new Error(`bad rates ${inRate} → ${outRate}`);
    this.step = inRate / outRate;
    this.kernel = inRate > outRate ? lowPass(taps, (0.5 * 0.9 * outRate) / inRate) : undefined;
    this.history = new Float32Array(this.kernel ? this.kernel.length - 1 : 0);
  }

  /** Resample one chunk; the output length varies by at most one sample from chunk to chunk. */
  process(input: Float32Array): Float32Array {
    const n = input.length;
    if (n === 0) return new Float32Array(0);
    const filtered = this.filter(input);
    const out = new Float32Array(Math.ceil((n - this.pos) / this.step) + 1);
    let count = 0;
    let pos = this.pos;
    while (pos < n - 1) {
      const i = Math.floor(pos);
      const frac = pos - i;
      const a = i < 0 ? this.prev : (filtered[i] ?? 0);
      const b = filtered[i + 1] ?? 0;
      out[count++] = a + (b - a) * frac;
      pos += this.step;
    }
    this.pos = pos - n;
    this.prev = filtered[n - 1] ?? 0;
    return out.subarray(0, count);
  }

  private filter(input: Float32Array): Float32Array {
    const kernel = this.kernel;
    if (!kernel) return input;
    const h = this.history;
    const m = h.length;
    const out = new Float32Array(input.length);
    for (let j = 0; j < input.length; j++) {
      // y[j] = Σ k[t] · x[j - t], with x before this chunk taken from the history.
      let acc = 0;
      for (let t = 0; t < kernel.length; t++) {
        const idx = j - t;
        const x = idx >= 0 ? (input[idx] ?? 0) : (h[m + idx] ?? 0);
        acc += (kernel[t] ?? 0) * x;
      }
      out[j] = acc;
    }
    // Keep the last m input samples for the next chunk.
    if (input.length >= m) h.set(input.subarray(input.length - m));
    else {
      h.copyWithin(0, input.length);
      h.set(input, m - input.length);
    }
    return out;
  }
}

/** A windowed-sinc low-pass, `cutoff` in cycles per sample (0 … 0.5), unity gain at DC. */
export function lowPass(taps: number, cutoff: number): Float32Array {
  const n = taps % 2 === 1 ? taps : taps + 1;
  const mid = (n - 1) / 2;
  const k = new Float32Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const x = i - mid;
    const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
    const w =
      0.42 -
      0.5 * Math.cos((2 * Math.PI * i) / (n - 1)) +
      0.08 * Math.cos((4 * Math.PI * i) / (n - 1));
    k[i] = sinc * w;
    sum += sinc * w;
  }
  for (let i = 0; i < n; i++) k[i] = (k[i] ?? 0) / sum;
  return k;
}

/** Float [-1, 1] → s16 with clamping. */
export function floatToS16(input: Float32Array): Int16Array {
  const out = new Int16Array(input.length);
  for (let i = 0; i < input.length; i++) {
    const v = Math.max(-1, Math.min(1, input[i] ?? 0));
    out[i] = v < 0 ? Math.round(v * 0x8000) : Math.round(v * 0x7fff);
  }
  return out;
}

/** s16le bytes → float [-1, 1); an odd trailing byte is ignored. */
export function s16ToFloat(pcm: ArrayBuffer): Float32Array {
  const n = pcm.byteLength >> 1;
  const view = new DataView(pcm);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = view.getInt16(i * 2, true) / 0x8000;
  return out;
}

/** Root mean square of a block, 0 … 1. */
export function rms(block: Float32Array | Int16Array, scale = 1): number {
  if (block.length === 0) return 0;
  let acc = 0;
  for (let i = 0; i < block.length; i++) {
    const v = (block[i] ?? 0) / scale;
    acc += v * v;
  }
  return Math.sqrt(acc / block.length);
}
