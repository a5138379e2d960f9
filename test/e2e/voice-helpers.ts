/**
 * What the voice end-to-end files share: Chromium with a fake microphone playing the spoken
 * fixture, WAV/PCM sample access, the best-lag correlation, and holding the mic button.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import { BROWSER_ARGS, findChromium, repo } from './harness.js';

export const FIXTURE = path.join(repo, 'test', 'fixtures', 'what-time-is-it.wav');

/**
 * The harness's Chromium plus the fake microphone playing `wav` once (and, unless `denied`, its
 * auto-accepted prompt).
 */
export function launchVoiceBrowser(denied = false, wav = FIXTURE): Promise<Browser> {
  return chromium.launch({
    executablePath: findChromium(),
    headless: true,
    args: [
      ...BROWSER_ARGS,
      '--autoplay-policy=no-user-gesture-required',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${wav}%noloop`,
      ...(denied ? [] : ['--use-fake-ui-for-media-stream']),
    ],
  });
}

/** The samples of a 16-bit mono WAV. */
export function wavSamples(file: string): Int16Array {
  const buf = readFileSync(file);
  let at = 12;
  while (at + 8 <= buf.length) {
    const id = buf.toString('ascii', at, at + 4);
    const size = buf.readUInt32LE(at + 4);
    if (id === 'data') {
      const data = buf.subarray(at + 8, at + 8 + size);
      return new Int16Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
    }
    at += 8 + size + (size % 2);
  }
  throw new Error(`${file}: no data chunk`);
}

/** Write 16-bit mono PCM `samples` as a WAV file. */
export function writeWav(file: string, samples: Int16Array, sampleRate = 16_000): void {
  const data = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  writeFileSync(file, Buffer.concat([header, data]));
}

export function pcmSamples(buf: Buffer): Int16Array {
  return new Int16Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + (buf.length & ~1)));
}

/**
 * The best normalized correlation of `ref` against `sig` over every lag that keeps most of `ref`
 * inside `sig` (the capture may start a little late or early).
 */
export function bestCorrelation(sig: Int16Array, ref: Int16Array): number {
  let best = 0;
  const minOverlap = Math.floor(ref.length * 0.8);
  for (let lag = -(ref.length - minOverlap); lag <= sig.length - minOverlap; lag++) {
    let sxy = 0;
    let sxx = 0;
    let syy = 0;
    const from = Math.max(0, -lag);
    const to = Math.min(ref.length, sig.length - lag);
    if (to - from < minOverlap) continue;
    for (let i = from; i < to; i++) {
      const x = ref[i]!;
      const y = sig[i + lag]!;
      sxy += x * y;
      sxx += x * x;
      syy += y * y;
    }
    if (sxx > 0 && syy > 0) best = Math.max(best, sxy / Math.sqrt(sxx * syy));
  }
  return best;
}

/** Press the mic button with the mouse; returns the release. */
export async function pressMic(page: Page): Promise<() => Promise<void>> {
  const box = await page.getByTestId('mic-button').boundingBox();
  if (!box) throw new Error('the mic button is not on screen');
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  return () => page.mouse.up();
}

/** Press the mic button with the mouse and hold it for `ms`. */
export async function holdMic(page: Page, ms: number): Promise<void> {
  const release = await pressMic(page);
  await page.waitForTimeout(ms);
  await release();
}
