/**
 * A walk through every page with the demo server, saving screenshots into docs/screenshots/ for
 * the README and reviews: the README set at 1440×900 in English on the light theme, and the same
 * app in 简体中文 and the dark theme, and in an 800×600 window. The checks here only make sure
 * each picture shows what its name says; the flows themselves are tested in the other files.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zhCN } from '../../renderer/i18n/zh-CN.js';
import { RobotSim } from '../../sim/robot/server.js';
import { XiaozhiSim } from '../../sim/xiaozhi/server.js';
import {
  by,
  cleanup,
  dismissToasts,
  goTo,
  launchBrowser,
  openApp,
  promptUp,
  say,
  snap,
  text,
  type UiHost,
} from './harness.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

const WIDE = { width: 1440, height: 900 };
const SMALL = { width: 800, height: 600 };

async function look(
  host: UiHost,
  page: Page,
  language: 'en' | 'zh-CN',
  theme: 'light' | 'dark',
  size: { width: number; height: number },
): Promise<void> {
  await page.setViewportSize(size);
  await host.api.saveSettings({ language, theme });
  // Polled from here: the page's CSP forbids evaluating strings inside it.
  await expect
    .poll(() =>
      page.evaluate("document.documentElement.lang + ' ' + document.documentElement.dataset.theme"),
    )
    .toBe(`${language} ${theme}`);
}

async function scrollTop(page: Page, selector: string): Promise<void> {
  await page.evaluate(`document.querySelector(${JSON.stringify(selector)}).scrollTo(0, 0)`);
}

/** Activity with the newest record open in its panel. */
async function activity(page: Page): Promise<void> {
  await goTo(page, 'activity');
  await page.getByTestId('audit-row').first().waitFor();
  if ((await page.getByTestId('audit-drawer').count()) === 0)
    await page.getByTestId('audit-row').first().click();
  await page.getByTestId('audit-drawer').waitFor();
  await scrollTop(page, '[data-testid="audit-table"]');
  await scrollTop(page, 'main .page');
}

/** A prompt from the demo, its allow buttons awake, optionally with the More menu open. */
async function prompt(page: Page, message: string, menu = false): Promise<void> {
  await goTo(page, 'chat');
  await say(page, message);
  await promptUp(page);
  await page.locator('[data-testid="prompt-allow-once"]:enabled').waitFor();
  if (menu) await page.getByTestId('prompt-more').click();
}

async function deny(page: Page): Promise<void> {
  if ((await page.getByRole('menu').count()) > 0) await page.keyboard.press('Escape');
  await page.getByTestId('prompt-deny').click();
  await page.getByTestId('prompt-modal').waitFor({ state: 'detached' });
}

describe('screenshots', { timeout: 120_000 }, () => {
  it('saves every page in English (1440×900, light), in 简体中文 and dark, and at 800×600', async () => {
    const { page, errors, host } = await openApp(browser);
    await page.emulateMedia({ reducedMotion: 'reduce' });
    const xiaozhi = await XiaozhiSim.start({});
    const robot = await RobotSim.start({});
    cleanup(() => Promise.all([xiaozhi.stop(), robot.stop()]));

    await look(host, page, 'en', 'light', WIDE);
    await page.getByTestId('welcome').waitFor();
    await snap(page, 'welcome');

    await page.getByTestId('demo-start').click();
    await page.locator(by('connection-banner', { state: 'ready' })).waitFor();
    await say(page, 'what time is it');
    const replies = page.locator(by('chat-assistant', { state: 'done' }));
    await expect.poll(() => replies.count()).toBe(1);

    await prompt(page, 'write a note: buy milk');
    await snap(page, 'prompt');
    await page.getByTestId('prompt-allow-once').click();
    await expect.poll(() => replies.count()).toBe(2);
    await page.locator(by('tool-card', { service: 'create_file', state: 'done' })).waitFor();
    // A refusal too: its short line, the server's sentence folded.
    await prompt(page, 'write a note: the secret plan');
    await deny(page);
    await expect.poll(() => replies.count()).toBe(3);
    await dismissToasts(page);
    await snap(page, 'chat');

    await goTo(page, 'services');
    const row = page.getByTestId('service-create_file');
    await row.getByTestId('service-try-create_file').locator('summary').first().click();
    await scrollTop(page, 'main .page');
    await snap(page, 'services');

    await activity(page);
    await snap(page, 'activity');

    // Other kinds of server live beside the demo (the demo stays the active one).
    for (const input of [
      { kind: 'xiaozhi' as const, name: 'Kitchen XiaoZhi', url: xiaozhi.url },
      { kind: 'robot' as const, name: 'Desk robot', url: robot.url },
    ]) {
      const saved = await host.api.saveConnection(input);
      await host.api.connect(saved.id);
    }
    await goTo(page, 'connections');
    await page.locator(by('connection-demo', { state: 'ready' })).waitFor();
    await expect
      .poll(() => page.locator('[data-testid^="connection-p-"][data-state="ready"]').count())
      .toBe(2);
    await dismissToasts(page);
    await snap(page, 'connections');

    await goTo(page, 'settings');
    await page.getByTestId('settings-language').waitFor();
    await snap(page, 'settings');

    // 简体中文, light, as the README's Chinese picture.
    await page.getByTestId('settings-language').selectOption('zh-CN');
    await expect.poll(() => text(page.getByTestId('nav-chat'))).toBe(zhCN.nav.chat);
    await goTo(page, 'chat');
    await say(page, '几点了');
    await expect.poll(() => replies.count()).toBe(4);
    await dismissToasts(page);
    await snap(page, 'chat-zh');

    // 简体中文, dark.
    await look(host, page, 'zh-CN', 'dark', WIDE);
    await prompt(page, 'write a note: 买牛奶', true);
    await snap(page, 'prompt-zh-dark');
    await deny(page);
    await goTo(page, 'services');
    await snap(page, 'services-zh-dark');
    await activity(page);
    await snap(page, 'activity-zh-dark');

    // A small window: icons-only sidebar, Activity's key columns, the record panel below.
    await look(host, page, 'en', 'dark', SMALL);
    await activity(page);
    await snap(page, 'activity-800x600-dark');
    await prompt(page, 'write a note: small window', true);
    await snap(page, 'prompt-800x600-dark');
    await deny(page);
    await look(host, page, 'zh-CN', 'light', SMALL);
    await goTo(page, 'chat');
    await dismissToasts(page);
    await snap(page, 'chat-zh-800x600');
    await goTo(page, 'services');
    await snap(page, 'services-zh-800x600');

    expect(errors).toEqual([]);
  });
});
