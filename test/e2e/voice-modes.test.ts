/**
 * End-to-end voice in the profile's other modes, with Chromium's fake microphone playing
 * test/fixtures/what-time-is-it.wav: hands-free (`mode:vad`, protocol §6.3: LISTEN start, audio
 * under that task, the server's LISTEN detecting/stop, then its reply) and push-to-talk with
 * Opus input (`input_audio_format:opus`, §6.2), whose decoded audio must still be the microphone.
 */
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProfileInput } from '../../app/contract/commands.js';
import type { AdventSim } from '../../sim/advent/server.js';
import { FrameType } from '../../app/wire/advent/frame.js';
import { type UiHost, by, cleanup, startHost, startSim, text } from './harness.js';
import {
  FIXTURE,
  launchVoiceBrowser,
  wavSamples,
  pcmSamples,
  bestCorrelation,
  holdMic,
} from './voice-helpers.js';

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
  // Locators: a polled waitForFunction string is refused by the page's CSP (no 'unsafe-eval').
  await page.getByTestId('bridge-status').waitFor({ state: 'detached' });
  await page.locator('.page-loading').waitFor({ state: 'detached' });
  return { host, page, errors, listens, notices };
}

/** A profile for `sim` made through the core's API, connected and active; the page shows it ready. */
async function connectProfile(
  app: VoiceApp,
  sim: AdventSim,
  extra: Partial<Extract<ProfileInput, { kind: 'advent' }>>,
): Promise<void> {
  const profile = await app.host.api.saveConnection(
    {
      kind: 'advent',
      name: 'Voice modes',
      host: '127.0.0.1',
      port: sim.port,
      ...extra,
    },
    'e2e-token',
  );
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
