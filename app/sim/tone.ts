import { nudgePcmMarkers } from '../wire/advent/frame.js';

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
