/**
 * End-to-end voice in the profile's other modes, with Chromium's fake microphone playing
 * test/fixtures/what-time-is-it.wav: hands-free (`mode:vad`, protocol §6.3: LISTEN start, audio
 * under that task, the server's LISTEN detecting/stop, then its reply) and push-to-talk with
 * Opus input (`input_audio_format:opus`, §6.2), whose decoded audio must still be the microphone.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProfileInput } from '../../app/contract/commands.js';
import type { AdventSim } from '../../app/sim/advent-sim.js';
import { FrameType } from '../../app/wire/advent/frame.js';
import {
  type UiHost,
  by,
  cleanup,
  findChromium,
  repo,
  startHost,
  startSim,
  text,
} from './harness.js';

const FIXTURE = path.join(repo, 'test', 'fixtures', 'what-time-is-it.wav');

/** The harness's Chromium plus the fake microphone and its auto-accepted prompt. */
function launchVoiceBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: findChromium(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
      '--autoplay-policy=no-user-gesture-required',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${FIXTURE}%noloop`,
      '--use-fake-ui-for-media-stream',
    ],
  });
}

// The next three are copied from voice.test.ts (which does not export them).

/** The samples of a 16-bit mono WAV. */
function wavSamples(file: string): Int16Array {
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

function pcmSamples(buf: Buffer): Int16Array {
  return new Int16Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + (buf.length & ~1)));
}

/**
 * The best normalized correlation of `ref` against `sig` over every lag that keeps most of `ref`
 * inside `sig` (the capture may start a little late or early; a codec delays its output).
 */
function bestCorrelation(sig: Int16Array, ref: Int16Array): number {
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

/** Press the mic button with the mouse and hold it for `ms`. */
async function holdMic(page: Page, ms: number): Promise<void> {
  const box = await page.getByTestId('mic-button').boundingBox();
  if (!box) throw new Error('the mic button is not on screen');
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.waitForTimeout(ms);
  await page.mouse.up();
}

interface VoiceApp {
  host: UiHost;
  page: Page;
  errors: string[];
  /** The `listen` events the page received over its bridge, in order. */
  listens: Array<{ taskId: string; message: { state?: string; mode?: string } }>;
  /** The messages of the `notice` events it received. */
  notices: string[];
}

/**
 * A fresh host and browser context (closed when the test finishes), the page's bridge watched
 * for `listen` events from before it opens, the app loaded.
 */
async function openVoiceApp(browser: Browser): Promise<VoiceApp> {
  const host = await startHost();
  cleanup(() => host.stop());
  const context = await browser.newContext({
    locale: 'en-US',
    viewport: { width: 1280, height: 800 },
  });
  cleanup(() => context.close());
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  const listens: VoiceApp['listens'] = [];
  const notices: string[] = [];
  page.on('websocket', (ws) => {
    ws.on('framereceived', ({ payload }) => {
      if (typeof payload !== 'string') return;
      try {
        const msg = JSON.parse(payload) as { t?: string; name?: string; payload?: unknown };
        if (msg.t === 'event' && msg.name === 'listen')
          listens.push(msg.payload as VoiceApp['listens'][number]);
        if (msg.t === 'event' && msg.name === 'notice')
          notices.push((msg.payload as { message: string }).message);
      } catch {
        // Not ours to judge here.
      }
    });
  });
  await page.goto(host.url);
  await page.getByTestId('nav-chat').waitFor();
  await page.waitForFunction(
    "!document.querySelector('[data-testid=bridge-status]') && !document.querySelector('.page-loading')",
  );
  return { host, page, errors, listens, notices };
}

/** A profile for `sim` made through the core's API, connected and active; the page shows it ready. */
async function connectProfile(
  app: VoiceApp,
  sim: AdventSim,
  extra: Partial<ProfileInput>,
): Promise<void> {
  const profile = await app.host.api.saveConnection({
    kind: 'advent',
    name: 'Voice modes',
    host: '127.0.0.1',
    port: sim.port,
    ...extra,
  });
  await app.host.api.setSecret(profile.id, 'e2e-token');
  await app.host.api.connect(profile.id);
  await app.host.api.setActiveConnection(profile.id);
  await app.page.locator(by('connection-banner', { state: 'ready' })).waitFor();
  await expect.poll(() => sim.registrations().length, { timeout: 10_000 }).toBeGreaterThan(0);
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchVoiceBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

describe('voice modes', { timeout: 90_000 }, () => {
  it('hands-free (mode:vad): LISTEN start, audio under its task, the server says stop, and the reply comes', async () => {
    const sim = await startSim({ demo: true, vadStopAfterMs: 800 });
    const app = await openVoiceApp(browser);
    const { page, errors, listens, notices } = app;
    await connectProfile(app, sim, { mode: 'vad' });
    expect(sim.lastAuth()?.params.mode).toBe('vad');

    const handsFree = page.getByTestId('hands-free');
    await expect.poll(() => handsFree.isDisabled(), { timeout: 10_000 }).toBe(false);
    await handsFree.check();
    await page.locator(by('mic-button', { phase: 'listening' })).waitFor();

    // LISTEN start on a fresh task, then that task's audio.
    const start = await sim.waitFor(
      (f) => f.type === FrameType.LISTEN && (f.json as { state?: string })?.state === 'start',
      10_000,
    );
    const taskId = start.taskId;
    expect(start.seq).toBe(0);
    expect(start.json).toMatchObject({ taskid: taskId, type: 'listen', state: 'start' });
    await sim.waitFor((f) => f.type === FrameType.AUDIO && f.taskId === taskId, 10_000);

    // After 800 ms of it the simulated VAD ends the input: that turn is the one answered.
    await expect.poll(() => sim.turns.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    const turn = sim.turns[0]!;
    expect(turn.taskId).toBe(taskId);
    expect(turn.vad).toBe('vad');
    const turnMs = Math.round(turn.audio.length / 32);
    expect(turnMs).toBeGreaterThanOrEqual(800);

    // The page got detecting then stop for that task, and ended its turn without a release.
    await expect
      .poll(() => listens.filter((l) => l.taskId === taskId).map((l) => l.message.state), {
        timeout: 10_000,
      })
      .toEqual(['detecting', 'stop']);
    expect(listens.find((l) => l.message.state === 'stop')?.message.mode).toBe('vad');
    await page.getByTestId('voice-bubble').first().waitFor();

    // The demo's reply says how much it heard.
    const reply = page.locator(by('chat-assistant', { state: 'done' })).first();
    await reply.waitFor({ timeout: 15_000 });
    expect(await text(reply.locator('.bubble-text'))).toBe(`I heard ${turnMs} ms of audio.`);

    // The server's "listening started" (STATUS 开始监听) is not a notice or a toast: the mic
    // button already shows it, and a toast per turn would cover the controls.
    expect(notices).not.toContain('开始监听');
    expect(await page.locator(by('toast'), { hasText: '开始监听' }).count()).toBe(0);

    // Hands-free off, from the keyboard (the switch is focusable and labelled). The loop stops and
    // the microphone goes back to rest.
    await handsFree.press('Space');
    await expect.poll(() => handsFree.isChecked(), { timeout: 5000 }).toBe(false);
    await page.locator(by('mic-button', { phase: 'idle' })).waitFor({ timeout: 20_000 });
    const starts = () =>
      sim.received.filter(
        (f) => f.type === FrameType.LISTEN && (f.json as { state?: string })?.state === 'start',
      ).length;
    const startsWhenOff = starts();
    // Nothing to wait for: no new hands-free turn may start.
    await page.waitForTimeout(1500);
    expect(starts()).toBe(startsWhenOff);
    expect(await page.getByTestId('mic-button').getAttribute('data-phase')).toBe('idle');
    // No END_FRAME in this flow (§6.3), and no rule broken.
    expect(sim.received.filter((f) => f.type === FrameType.END && f.taskId === taskId)).toEqual([]);
    expect(sim.violations).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('Opus input: a push-to-talk turn uploaded as Opus decodes to the microphone (correlation ≥ 0.8)', async () => {
    const sim = await startSim({ demo: true });
    const app = await openVoiceApp(browser);
    const { page, errors } = app;
    await connectProfile(app, sim, { mode: 'manual', inputAudioFormat: 'opus' });
    expect(sim.lastAuth()?.params.input_audio_format).toBe('opus');

    await holdMic(page, 2200);
    await expect.poll(() => sim.turns.length, { timeout: 10_000 }).toBe(1);
    const turn = sim.turns[0]!;
    // It came as Opus (length-prefixed packets), not as PCM.
    expect(turn.opus).toBeDefined();
    expect(turn.opus!.length).toBeGreaterThan(0);
    expect(turn.opus!.length).toBeLessThan(turn.audio.length / 2);

    const received = pcmSamples(turn.audio);
    const fixture = wavSamples(FIXTURE);
    expect(received.length).toBeGreaterThan(fixture.length);
    expect(bestCorrelation(received, fixture)).toBeGreaterThanOrEqual(0.8);

    // And the demo answers it as usual.
    const reply = page.locator(by('chat-assistant', { state: 'done' }));
    await reply.waitFor({ timeout: 15_000 });
    expect(await text(reply.locator('.bubble-text'))).toMatch(/^I heard \d+ ms of audio\.$/);
    expect(sim.violations).toEqual([]);
    expect(errors).toEqual([]);
  });
});
