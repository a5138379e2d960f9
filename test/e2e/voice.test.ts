/**
 * End-to-end voice, as a user does it: Chromium's fake microphone plays a spoken WAV
 * (test/fixtures/what-time-is-it.wav); the page captures it (AudioWorklet → 16 kHz s16le),
 * streams it through the browser host to the core and on to the server, and plays the reply's
 * audio. Push-to-talk against the demo, fidelity of what the server received, barge-in, and a
 * blocked microphone.
 */
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrameType } from '../../app/wire/advent/frame.js';
import { sineTone } from '../../sim/kit/tone.js';
import { en } from '../../renderer/i18n/en.js';
import { by, connectThroughUi, dismissToasts, goTo, openApp, startSim, text } from './harness.js';
import {
  FIXTURE,
  launchVoiceBrowser,
  wavSamples,
  pcmSamples,
  bestCorrelation,
  pressMic,
  holdMic,
} from './voice-helpers.js';

interface Counters {
  receivedSamples: number;
  playedSamples: number;
  directSamples: number;
  droppedSamples: number;
  capturedChunks: number;
  flushes: number;
}

function counters(page: Page): Promise<Counters> {
  return page.evaluate(() => {
    const a = (globalThis as unknown as { __adventAudio: Counters }).__adventAudio;
    return {
      receivedSamples: a.receivedSamples,
      playedSamples: a.playedSamples,
      directSamples: a.directSamples,
      droppedSamples: a.droppedSamples,
      capturedChunks: a.capturedChunks,
      flushes: a.flushes,
    };
  });
}

/** Press the mic button with the mouse (held until `release`). */
let browser: Browser;
beforeAll(async () => {
  browser = await launchVoiceBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

describe('voice', { timeout: 60_000 }, () => {
  it('push-to-talk with the demo: a 2 s hold becomes a voice message of about 2 s, and the reply is heard', async () => {
    const { page, errors } = await openApp(browser);
    await page.getByTestId('demo-start').click();
    await page.locator(by('connection-banner', { state: 'ready' })).waitFor();
    const mic = page.getByTestId('mic-button');
    expect(await mic.getAttribute('aria-pressed')).toBe('false');

    const release = await pressMic(page);
    await page.locator(by('mic-button', { phase: 'listening' })).waitFor();
    expect(await mic.getAttribute('aria-pressed')).toBe('true');
    await page.waitForTimeout(2000);
    await release();

    const bubble = page.getByTestId('voice-bubble');
    await bubble.waitFor();
    const ms = Number(await bubble.getAttribute('data-ms'));
    // What was held (2 s, give or take how late a busy machine delivers the release), less the
    // moment it takes the microphone to open: exactly every 20 ms the page captured.
    expect(ms).toBeGreaterThan(1000);
    expect(ms).toBeLessThan(3000);
    expect(Math.abs(ms - (await counters(page)).capturedChunks * 20)).toBeLessThanOrEqual(40);
    expect(await text(bubble)).toBe(
      en.chat.voiceTurn.replace('{{seconds}}', (ms / 1000).toFixed(1)),
    );

    // The demo says how much it heard: all of it.
    const reply = page.locator(by('chat-assistant', { state: 'done' }));
    await reply.waitFor();
    const heard = /I heard (\d+) ms of audio\./.exec(await text(reply.locator('.bubble-text')));
    expect(heard).not.toBeNull();
    expect(Math.abs(Number(heard![1]) - ms)).toBeLessThanOrEqual(25);

    // Its voice (300 ms at 16 kHz) is played through.
    await expect
      .poll(() => counters(page), { timeout: 10_000 })
      .toSatisfy(
        (c: Counters) => c.receivedSamples >= 4800 && c.playedSamples >= 0.9 * c.receivedSamples,
      );
    // The reply of the turn just sent was approved before it came: the bridge worker played all
    // of it without the page's main thread.
    const played = await counters(page);
    expect(played.directSamples).toBe(played.receivedSamples);
    await page.locator(by('mic-button', { phase: 'idle' })).waitFor();
    expect(errors).toEqual([]);
  });

  it('what the server receives is the microphone: it correlates with the spoken file', async () => {
    const sim = await startSim({ demo: true });
    const { page, errors } = await openApp(browser);
    await connectThroughUi(page, sim);

    await holdMic(page, 2200);
    await expect.poll(() => sim.turns.length, { timeout: 10_000 }).toBe(1);
    const received = pcmSamples(sim.turns[0]!.audio);
    const fixture = wavSamples(FIXTURE);
    expect(received.length).toBeGreaterThan(fixture.length);
    // Chunks of 20 ms, as the protocol asks.
    expect(sim.turns[0]!.audio.length % 640).toBe(0);
    const r = bestCorrelation(received, fixture);
    expect(r).toBeGreaterThanOrEqual(0.9);

    // The page sent exactly what it captured.
    const captured = await page.evaluate(() =>
      (
        globalThis as unknown as { __adventAudio: { captured: ArrayBuffer[] } }
      ).__adventAudio.captured.reduce((n, b) => n + b.byteLength, 0),
    );
    expect(captured).toBe(sim.turns[0]!.audio.length);
    expect(errors).toEqual([]);
  });

  it('a press reaches the server only once it lasts 0.3 s: a 0.5 s one in full, then END_FRAME; a 0.2 s one not at all', async () => {
    const sim = await startSim({ demo: true });
    const { page, errors } = await openApp(browser);
    await connectThroughUi(page, sim);
    /** What the voice turns put on the wire: everything but registration and MCP traffic. */
    const turnFrames = () =>
      sim.received.filter((f) => f.type !== FrameType.AUTH && f.type !== FrameType.MCP);
    const captured = () =>
      page.evaluate(() =>
        (
          globalThis as unknown as { __adventAudio: { captured: ArrayBuffer[] } }
        ).__adventAudio.captured.reduce((n, b) => n + b.byteLength, 0),
      );

    await holdMic(page, 500);
    await expect.poll(() => sim.turns.length, { timeout: 10_000 }).toBe(1);
    const long = turnFrames();
    const audio = long.filter((f) => f.type === FrameType.AUDIO);
    expect(audio.length).toBeGreaterThan(0);
    // One task, every frame the microphone gave from the start of the press, then END_FRAME.
    expect(new Set(long.map((f) => f.taskId)).size).toBe(1);
    expect(long.at(-1)!.type).toBe(FrameType.END);
    expect(long.slice(0, -1).every((f) => f.type === FrameType.AUDIO)).toBe(true);
    expect(audio.reduce((n, f) => n + f.payload.length, 0)).toBe(await captured());
    await page.locator(by('mic-button', { phase: 'idle' })).waitFor({ timeout: 10_000 });

    const chunksBefore = (await counters(page)).capturedChunks;
    await holdMic(page, 200);
    await page.locator(by('mic-button', { phase: 'idle' })).waitFor();
    await page.waitForTimeout(500);
    // The microphone did hear the short press; none of it left the page.
    expect((await counters(page)).capturedChunks).toBeGreaterThan(chunksBefore);
    expect(turnFrames().length).toBe(long.length);
    expect(sim.turns.length).toBe(1);
    expect(await page.getByTestId('voice-bubble').count()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('Space held outside the text box talks (a space typed in it does not); the voice mode set in Settings enables hands-free', async () => {
    const sim = await startSim({ demo: true });
    const { page, errors } = await openApp(browser);
    await connectThroughUi(page, sim);

    const input = page.getByTestId('chat-input');
    await input.focus();
    await page.keyboard.press('Space');
    expect(await input.inputValue()).toBe(' ');
    expect(await page.getByTestId('mic-button').getAttribute('data-phase')).toBe('idle');
    await input.fill('');
    await page.evaluate('document.activeElement && document.activeElement.blur()');

    await page.keyboard.down('Space');
    await page.locator(by('mic-button', { phase: 'listening' })).waitFor();
    await page.waitForTimeout(1200);
    await page.keyboard.up('Space');
    await expect.poll(() => sim.turns.length, { timeout: 10_000 }).toBe(1);
    expect(sim.turns[0]!.audio.length).toBeGreaterThan(0.8 * 32_000);
    await page.getByTestId('voice-bubble').waitFor();

    const handsFree = page.getByTestId('hands-free');
    expect(await handsFree.isDisabled()).toBe(true);
    await goTo(page, 'settings');
    await page.getByTestId('voice-mode').selectOption('vad');
    await expect
      .poll(() => page.getByTestId('voice-mode').inputValue(), { timeout: 10_000 })
      .toBe('vad');
    await dismissToasts(page);
    await goTo(page, 'chat');
    await page.locator(by('connection-banner', { state: 'ready' })).waitFor();
    await expect.poll(() => handsFree.isDisabled(), { timeout: 10_000 }).toBe(false);
    expect(errors).toEqual([]);
  });

  it('barge-in: talking while a reply plays stops it at once, and its late audio is not played', async () => {
    const sim = await startSim({
      demo: false,
      // A long spoken reply, streamed over about two seconds (faster than it plays).
      onTurn: async (turn, peer) => {
        await peer.text(turn.taskId, ['A long answer.']);
        const tone = sineTone(4000, 330, 0.2);
        for (let at = 0; at < tone.length && !peer.closed; at += 3200) {
          await peer.audio(turn.taskId, tone.subarray(at, at + 3200));
          await new Promise((r) => setTimeout(r, 50));
        }
        await peer.end(turn.taskId);
      },
    });
    const { page, errors } = await openApp(browser);
    await connectThroughUi(page, sim);

    await holdMic(page, 600);
    await page.locator(by('mic-button', { phase: 'speaking' })).waitFor({ timeout: 10_000 });
    await expect
      .poll(async () => (await counters(page)).playedSamples, { timeout: 10_000 })
      .toBeGreaterThan(4000);

    const release = await pressMic(page);
    await page.locator(by('mic-button', { phase: 'listening' })).waitFor();
    await page.waitForTimeout(150);
    const a = await counters(page);
    await page.waitForTimeout(500);
    const b = await counters(page);
    await release();

    expect(a.flushes).toBeGreaterThan(0);
    // Cut short, and nothing more was played while the user talked, though the server was still
    // streaming the old reply (dropped by the core or by the page, never heard).
    expect(a.playedSamples).toBeLessThan(4000 * 16);
    expect(b.playedSamples).toBe(a.playedSamples);

    // The new turn's reply plays; the old one's never resumes.
    await expect
      .poll(async () => (await counters(page)).playedSamples, { timeout: 10_000 })
      .toBeGreaterThan(b.playedSamples);
    expect(sim.turns.length).toBe(2);
    expect(errors).toEqual([]);
  });
});

describe('voice without a microphone', { timeout: 60_000 }, () => {
  let blocked: Browser;
  beforeAll(async () => {
    blocked = await launchVoiceBrowser(true);
  }, 30_000);
  afterAll(async () => {
    await blocked?.close();
  });

  it('microphone denied: a clear message, and nothing is sent', async () => {
    const sim = await startSim({ demo: true });
    const { page } = await openApp(blocked);
    await connectThroughUi(page, sim);

    await holdMic(page, 800);
    const problem = page.getByTestId('mic-problem');
    await problem.waitFor();
    expect(await text(problem)).toBe(en.voice.problem.denied);
    expect(await page.getByTestId('mic-button').getAttribute('data-phase')).toBe('idle');
    await page.waitForTimeout(300);
    expect(sim.turns).toEqual([]);
    expect((await counters(page)).capturedChunks).toBe(0);
  });
});
