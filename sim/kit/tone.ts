import { nudgePcmMarkers } from '../../app/wire/advent/frame.js';

export const PCM_RATE = 16_000;
/** s16le mono at 16 kHz: 32 bytes per millisecond. */
export const PCM_BYTES_PER_MS = (PCM_RATE * 2) / 1000;

/**
 * A quiet sine beep as s16le mono PCM, the shape the server's voice replies have (protocol §6.4).
 * Short fades keep it from clicking; the volume stays low because someone may be wearing headphones.
 */
export function sineTone(ms = 300, hz = 440, volume = 0.1, rate = PCM_RATE): Buffer {
  const samples = Math.round((ms * rate) / 1000);
  const fade = Math.min(Math.round(rate / 100), samples >> 1); // 10 ms
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    const envelope = Math.min(1, i / fade, (samples - 1 - i) / fade);
    const value = Math.round(Math.sin((2 * Math.PI * hz * i) / rate) * volume * envelope * 32767);
    pcm.writeInt16LE(value, i * 2);
  }
  return pcm;
}

/**
 * A few "syllables" of a voice-like sound (a gliding fundamental with harmonics under a rounded
 * envelope, short gaps between), so the demo's spoken reply sounds like speech, not a beep.
 * Used when no recorded fixture is at hand; deterministic.
 */
export function speechLike(syllables = 4, volume = 0.12, rate = PCM_RATE): Buffer {
  const parts: Buffer[] = [];
  for (let s = 0; s < syllables; s++) {
    const ms = 160 + ((s * 37) % 80);
    const n = Math.round((ms * rate) / 1000);
    const f0 = 170 + ((s * 53) % 60);
    const syllable = Buffer.alloc(n * 2);
    for (let i = 0; i < n; i++) {
      const t = i / rate;
      const envelope = Math.sin((Math.PI * i) / n);
      const f = f0 * (1 + 0.1 * (i / n)); // a slight rise, as in speech
      const v =
        0.6 * Math.sin(2 * Math.PI * f * t) +
        0.25 * Math.sin(2 * Math.PI * 2 * f * t) +
        0.15 * Math.sin(2 * Math.PI * 3 * f * t);
      syllable.writeInt16LE(Math.round(v * envelope * volume * 32767), i * 2);
    }
    parts.push(syllable, Buffer.alloc(Math.round((60 * rate) / 1000) * 2));
  }
  return Buffer.concat(parts);
}

/** Cut PCM into frame-sized chunks, each made safe to send (no `##END`/`##START` inside). */
export function pcmChunks(pcm: Buffer, chunkBytes: number): Buffer[] {
  if (!(chunkBytes > 0)) throw new RangeError(`chunkBytes must be positive: ${chunkBytes}`);
  const out: Buffer[] = [];
  for (let at = 0; at < pcm.length; at += chunkBytes) {
    const chunk = nudgePcmMarkers(pcm.subarray(at, at + chunkBytes));
    out.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  return out;
}
