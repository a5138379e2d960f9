/**
 * Normalized cross-correlation of two s16 signals at the best lag of `b` against `a` (a codec
 * delays its output by a few ms, so samples must be aligned before they are compared).
 */
export function correlation(
  a: Int16Array,
  b: Int16Array,
  maxLag = 1000,
): { value: number; lag: number } {
  let best = { value: -1, lag: 0 };
  for (let lag = 0; lag <= maxLag; lag++) {
    const n = Math.min(a.length, b.length - lag);
    if (n <= 0) break;
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let i = 0; i < n; i++) {
      const x = a[i]!;
      const y = b[i + lag]!;
      ab += x * y;
      aa += x * x;
      bb += y * y;
    }
    const value = aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : 0;
    if (value > best.value) best = { value, lag };
  }
  return best;
}

export function samples(pcm: Uint8Array): Int16Array {
  const copy = Buffer.from(pcm);
  return new Int16Array(copy.buffer, copy.byteOffset, copy.byteLength >> 1);
}

/** A voice-like test signal: a few harmonics under a syllable-like envelope, as s16le PCM. */
export function voiceLike(ms: number, rate = 16_000): Buffer {
  const n = Math.round((ms * rate) / 1000);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) {
    const t = i / rate;
    const envelope = 0.5 - 0.5 * Math.cos(2 * Math.PI * 3 * t); // ~3 syllables a second
    const f0 = 180 + 20 * Math.sin(2 * Math.PI * 2 * t);
    const v =
      0.5 * Math.sin(2 * Math.PI * f0 * t) +
      0.3 * Math.sin(2 * Math.PI * 2 * f0 * t) +
      0.15 * Math.sin(2 * Math.PI * 700 * t) +
      0.08 * Math.sin(2 * Math.PI * 1200 * t);
    out.writeInt16LE(Math.round(v * envelope * 12_000), i * 2);
  }
  return out;
}
