/**
 * A walk through every page with the demo server, saving 1280×800 screenshots into
 * docs/screenshots/ for the README and reviews. The checks here only make sure each picture shows
 * what its name says; the flows themselves are tested in the other files.
 */
import type { Browser } from 'playwright-core';
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
} from './harness.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

describe('screenshots', { timeout: 60_000 }, () => {
  it('saves a screenshot of every page, the permission prompt and the Chinese chat', async () => {
    const { page, errors, host } = await openApp(browser);
    const xiaozhi = await XiaozhiSim.start({});
    const robot = await RobotSim.start({});
    cleanup(() => Promise.all([xiaozhi.stop(), robot.stop()]));

    await page.getByTestId('welcome').waitFor();
    await snap(page, 'welcome');

    await page.getByTestId('demo-start').click();
    await page.locator(by('connection-banner', { state: 'ready' })).waitFor();
    await say(page, 'what time is it');
    const replies = page.locator(by('chat-assistant', { state: 'done' }));
    await expect.poll(() => replies.count()).toBe(1);

    await say(page, 'write a note: buy milk');
    const modal = await promptUp(page);
    // Awake allow buttons, as the user sees them after the first moment.
    await page.locator('[data-testid="prompt-allow-once"]:enabled').waitFor();
    await snap(page, 'prompt');
    await modal.getByTestId('prompt-allow-once').click();
    await expect.poll(() => replies.count()).toBe(2);
    await page.locator(by('tool-card', { service: 'create_file', state: 'done' })).waitFor();
    await snap(page, 'chat');

    await goTo(page, 'services');
    await page.getByTestId('service-create_file').waitFor();
    await snap(page, 'services');

    await goTo(page, 'activity');
    await expect.poll(() => page.getByTestId('audit-row').count()).toBe(2);
    await page.getByTestId('audit-row').filter({ hasText: 'create_file' }).click();
    await page.getByTestId('audit-drawer').waitFor();
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

    await page.getByTestId('settings-language').selectOption('zh-CN');
    await expect.poll(() => text(page.getByTestId('nav-chat'))).toBe(zhCN.nav.chat);
    await goTo(page, 'chat');
    await say(page, '几点了');
    await expect.poll(() => replies.count()).toBe(3);
    await dismissToasts(page);
    await snap(page, 'chat-zh');

    expect(errors).toEqual([]);
  });
});
