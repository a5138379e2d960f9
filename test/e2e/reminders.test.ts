/**
 * End-to-end: reminders as a user meets them, in Debian's Chromium against the real browser host.
 * "remind me in 5 seconds to stretch" to the simulated Advent demo server: asked first, set, and
 * when it rings the page shows it and the server is asked to say it (SPEAK). With no server
 * connected, the window itself says it (the Web Speech API, stubbed here to record the calls).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrameType } from '../../app/wire/advent/frame.js';
import { en } from '../../renderer/i18n/en.js';
import {
  by,
  connectThroughUi,
  launchBrowser,
  openApp,
  promptUp,
  say,
  startSim,
  text,
} from './harness.js';
import { accessibilityViolations } from './axe.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

/**
 * Replace the page's speech synthesis with one voice that records what it is asked to say, then
 * reload so the app starts with it.
 */
async function recordSpeech(page: Page): Promise<void> {
  await page.addInitScript({
    content: `
      const spoken = [];
      window.__spoken = spoken;
      Object.defineProperty(window, 'speechSynthesis', {
        configurable: true,
        value: {
          getVoices: () => [{ lang: 'en-US', name: 'Test voice', default: true }],
          speak: (u) => spoken.push({ text: u.text, lang: u.lang }),
          cancel: () => undefined,
          addEventListener: () => undefined,
          removeEventListener: () => undefined,
        },
      });`,
  });
  await page.reload();
  await page.getByTestId('nav-chat').waitFor();
  // Locators: a polled waitForFunction string is refused by the page's CSP (no 'unsafe-eval').
  await page.getByTestId('bridge-status').waitFor({ state: 'detached' });
  await page.locator('.page-loading').waitFor({ state: 'detached' });
}

const spoken = (page: Page) =>
  page.evaluate('window.__spoken') as Promise<{ text: string; lang: string }[]>;

describe('reminders', { timeout: 60_000 }, () => {
  it('"remind me in 5 seconds to stretch": asked first, then it rings in the page and the server says it', async () => {
    const sim = await startSim();
    const { page, errors } = await openApp(browser);
    await recordSpeech(page);
    await connectThroughUi(page, sim);

    await say(page, 'remind me in 5 seconds to stretch');
    const modal = await promptUp(page);
    expect(await text(modal.getByTestId('prompt-summary'))).toBe(
      'Set a timer for 5 seconds: “stretch”',
    );
    await modal.getByTestId('prompt-allow-once').click();
    await page
      .locator(by('chat-assistant', { state: 'done' }))
      .filter({ hasText: "OK, I'll remind you in 5 seconds to stretch." })
      .waitFor();

    const card = page.getByTestId('chat-reminder');
    await card.waitFor({ timeout: 20_000 });
    expect(await text(card)).toContain(`${en.reminders.card.timer} stretch`);
    expect(
      await accessibilityViolations(page, "document.querySelector('[data-testid=chat-reminder]')"),
    ).toEqual([]);
    expect(await text(page.getByTestId('toast').filter({ hasText: 'stretch' }))).toContain(
      "⏰ Time's up: stretch",
    );
    // The connection says it (Advent SPEAK); the window stays quiet.
    const frame = await sim.waitFor((f) => f.type === FrameType.SPEAK);
    expect(frame.text).toBe("Time's up: stretch.");
    expect(await spoken(page)).toEqual([]);

    await page.getByTestId('nav-reminders').click();
    const rung = page.getByTestId('reminders-rung');
    expect(await text(rung)).toContain('stretch');
    expect(await text(rung)).toContain('set by Test server');
    expect(errors).toEqual([]);
  });

  it('with no server connected it still rings, and the window says it aloud', async () => {
    const { host, page, errors } = await openApp(browser);
    await recordSpeech(page);
    await page.getByTestId('nav-reminders').click();
    expect(await text(page.getByTestId('reminders-empty'))).toBe(en.reminders.empty);

    const set = await host.api.runService('set_timer', { duration_seconds: 6, label: 'stretch' });
    expect(set).toMatchObject({ ok: true });
    const waiting = page.getByTestId('reminders-waiting');
    expect(await text(waiting)).toContain('stretch');

    const rung = page.getByTestId('reminders-rung');
    await rung.waitFor({ timeout: 20_000 });
    // Seen on whatever page is open: a toast says it too.
    expect(await text(page.getByTestId('toast').filter({ hasText: 'stretch' }))).toContain(
      "⏰ Time's up: stretch",
    );
    expect(await text(rung)).toContain('stretch');
    expect(await accessibilityViolations(page)).toEqual([]);
    await expect
      .poll(() => spoken(page), { timeout: 10_000 })
      .toEqual([{ text: "Time's up: stretch", lang: 'en' }]);

    // Cleared from the list with its button.
    await rung.getByRole('button', { name: 'Clear “stretch” from the list' }).click();
    await page.getByTestId('reminders-empty').waitFor();

    expect(errors).toEqual([]);
  });
});
