/**
 * End-to-end local voice detection (Settings → Voice → "Detect speech on this computer"):
 * Chromium's fake microphone plays half a second of silence, the spoken fixture
 * (test/fixtures/what-time-is-it.wav) and three seconds of silence, once. With the switch on, one
 * click on the mic button (no hold) starts a push-to-talk turn, and the Silero model running in
 * the page ends it when the speech stops: the server gets that audio and END_FRAME under one task.
 * The model, its worklet and ONNX Runtime's wasm come from the page's own origin, nothing else.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProfileInput } from '../../app/contract/commands.js';
import type { AdventSim } from '../../sim/advent/server.js';
import { FrameType } from '../../app/wire/advent/frame.js';
import { en } from '../../renderer/i18n/en.js';
import { type UiHost, by, cleanup, goTo, startHost, startSim, text } from './harness.js';
import {
  FIXTURE,
  bestCorrelation,
  launchVoiceBrowser,
  pcmSamples,
  wavSamples,
  writeWav,
} from './voice-helpers.js';

interface VadApp {
  host: UiHost;
  context: BrowserContext;
  page: Page;
  errors: string[];
  /** Every URL the page (and its workers) requested, in order. */
  requests: string[];
}

/** A fresh host and browser context (closed when the test finishes), requests watched from the start. */
async function openVadApp(browser: Browser): Promise<VadApp> {
  const host = await startHost();
  cleanup(() => host.stop());
  const context = await browser.newContext({
    locale: 'en-US',
    viewport: { width: 1280, height: 800 },
  });
  cleanup(() => context.close());
  const requests: string[] = [];
  context.on('request', (r) => requests.push(r.url()));
  const page = await context.newPage();
  page.on('request', (r) => requests.push(r.url()));
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.goto(host.url);
  await page.getByTestId('nav-chat').waitFor();
  // Locators: a polled waitForFunction string is refused by the page's CSP (no 'unsafe-eval').
  await page.getByTestId('bridge-status').waitFor({ state: 'detached' });
  await page.locator('.page-loading').waitFor({ state: 'detached' });
  return { host, context, page, errors, requests };
}

/** A push-to-talk profile for `sim`, connected and active; the page shows it ready. */
async function connectManual(app: VadApp, sim: AdventSim): Promise<void> {
  const input: Extract<ProfileInput, { kind: 'advent' }> = {
    kind: 'advent',
    name: 'Local VAD',
    host: '127.0.0.1',
    port: sim.port,
    mode: 'manual',
  };
  const profile = await app.host.api.saveConnection(input, 'e2e-token');
  await app.host.api.connect(profile.id);
  await app.host.api.setActiveConnection(profile.id);
  await app.page.locator(by('connection-banner', { state: 'ready' })).waitFor();
  await expect.poll(() => sim.registrations().length, { timeout: 10_000 }).toBeGreaterThan(0);
}

const origin = (url: string) => new URL(url).origin;
/** The setting as the page keeps it (renderer/audio/shared.ts). */
const LOCAL_VAD_PREF = "localStorage.getItem('advent-agent.voice.localVad')";

let browser: Browser;
let dir: string;
let speech: Int16Array;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-local-vad-'));
  speech = wavSamples(FIXTURE);
  // 0.5 s of silence, the speech, 3 s of silence: the speech ends well before the file does.
  const samples = new Int16Array(8000 + speech.length + 48_000);
  samples.set(speech, 8000);
  const wav = path.join(dir, 'speech-then-silence.wav');
  writeWav(wav, samples);
  browser = await launchVoiceBrowser(false, wav);
}, 30_000);
afterAll(async () => {
  await browser?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('local voice detection', { timeout: 90_000 }, () => {
  it('one click, then speech: the end of speech ends the turn (audio + END_FRAME under one task), all from our origin', async () => {
    const sim = await startSim({ demo: true });
    const app = await openVadApp(browser);
    const { page, errors, requests } = app;
    await connectManual(app, sim);

    // Settings → Voice: turn it on; it loads the model, then stays on.
    await goTo(page, 'settings');
    const toggle = page.getByTestId('voice-local-vad');
    expect(await toggle.isChecked()).toBe(false);
    expect(await toggle.isDisabled()).toBe(false);
    await toggle.check();
    await page.locator(by('voice-local-vad', { state: 'on' })).waitFor({ timeout: 30_000 });
    expect(await toggle.isChecked()).toBe(true);
    expect(await page.getByTestId('voice-local-vad-error').count()).toBe(0);
    expect(await page.evaluate(LOCAL_VAD_PREF)).toBe('on');

    // Chat: the mic button now says click-to-talk. One click, no hold.
    await goTo(page, 'chat');
    const mic = page.getByTestId('mic-button');
    expect(await mic.getAttribute('data-local-vad')).toBe('true');
    expect(await mic.getAttribute('title')).toBe(en.voice.clickHint);
    await mic.click();

    // The server gets the turn's audio and then END_FRAME, under one task id, with no release.
    const end = await sim.waitFor((f) => f.type === FrameType.END, 30_000);
    const audio = sim.received.filter((f) => f.type === FrameType.AUDIO);
    expect(audio.length).toBeGreaterThan(0);
    expect(new Set(audio.map((f) => f.taskId))).toEqual(new Set([end.taskId]));
    await expect.poll(() => sim.turns.length, { timeout: 10_000 }).toBe(1);
    const turn = sim.turns[0]!;
    expect(turn.taskId).toBe(end.taskId);
    expect(turn.vad).toBeUndefined();
    // What was said reached the server intact.
    expect(bestCorrelation(pcmSamples(turn.audio), speech)).toBeGreaterThanOrEqual(0.8);

    // The page left "listening" by itself and the demo's answer comes; then the mic is at rest.
    const reply = page.locator(by('chat-assistant', { state: 'done' }));
    await reply.waitFor({ timeout: 20_000 });
    expect(await text(reply.locator('.bubble-text'))).toBe(
      `I heard ${Math.round(turn.audio.length / 32)} ms of audio.`,
    );
    await page.locator(by('mic-button', { phase: 'idle' })).waitFor({ timeout: 20_000 });
    expect(sim.received.filter((f) => f.type === FrameType.END)).toHaveLength(1);

    // The model and ONNX Runtime came from the page's own origin; nothing went anywhere else.
    // (Playwright does not report AudioWorklet module fetches; vad-web builds the worklet's URL
    // from the same base, and without the worklet no speech would have been detected.)
    const own = origin(app.host.url);
    const paths = requests.map((u) => (u.startsWith(own) ? new URL(u).pathname : u));
    expect(paths).toContain('/vad/silero_vad_legacy.onnx');
    expect(paths).toContain('/vad/ort-wasm-simd-threaded.wasm');
    expect(requests.filter((u) => !u.startsWith('data:') && origin(u) !== own)).toEqual([]);
    expect(sim.violations).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('a model that cannot load: the switch turns itself off and says why; the mic stays hold-to-talk', async () => {
    const sim = await startSim({ demo: true });
    const app = await openVadApp(browser);
    const { page, context, errors } = app;
    await connectManual(app, sim);
    await context.route('**/vad/silero_vad_legacy.onnx', (route) =>
      route.fulfill({ status: 404, contentType: 'text/plain', body: 'not here' }),
    );

    await goTo(page, 'settings');
    const toggle = page.getByTestId('voice-local-vad');
    await toggle.check();
    const problem = page.getByTestId('voice-local-vad-error');
    await problem.waitFor({ timeout: 30_000 });
    expect(await text(problem)).toBe(
      'Turned off: the speech model could not start here (silero_vad_legacy.onnx: HTTP 404).',
    );
    expect(await toggle.isChecked()).toBe(false);
    expect(await toggle.getAttribute('data-state')).toBe('failed');
    expect(await page.evaluate(LOCAL_VAD_PREF)).toBe(null);

    await goTo(page, 'chat');
    const mic = page.getByTestId('mic-button');
    expect(await mic.getAttribute('data-local-vad')).toBe('false');
    expect(await mic.getAttribute('title')).toBe(en.voice.holdHint);
    // Only the failed model load was reported (by the browser and the library).
    expect(errors.filter((e) => !/silero_vad_legacy\.onnx|404/.test(e))).toEqual([]);
  });
});
