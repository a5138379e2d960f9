/**
 * End-to-end: take_screenshot in the browser host. The page is asked, the user picks what to share
 * (Chromium's fake capture device stands in for the screen), and one scaled JPEG goes back to the
 * service; declining is a clear "no".
 */
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { en } from '../../renderer/i18n/en.js';
import { accessibilityViolations } from './axe.js';
import { BROWSER_ARGS, findChromium, openApp, text } from './harness.js';

let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: findChromium(),
    headless: true,
    args: [...BROWSER_ARGS, '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'],
  });
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

describe('screen capture through the page', { timeout: 60_000 }, () => {
  it('asks, the user picks, and one scaled JPEG reaches the service', async () => {
    const { host, page, errors } = await openApp(browser);
    const run = host.api.runService('take_screenshot', {});
    const dialog = page.getByTestId('screen-request');
    await dialog.waitFor();
    expect(await text(dialog.locator('h2'))).toBe(en.screen.title);
    expect(await text(dialog)).toContain('local asked for a picture of your screen');
    expect(
      await accessibilityViolations(page, "document.querySelector('[data-testid=screen-request]')"),
    ).toEqual([]);
    await dialog.getByTestId('screen-choose').click();
    const result = await run;
    expect(result).toMatchObject({ ok: true });
    expect((result as { data: { message: string } }).data.message).toMatch(
      /^Captured the screen \(\d+×\d+ JPEG, [\d.]+ (B|KB)\)$/,
    );
    await dialog.waitFor({ state: 'detached' });
    expect(errors).toEqual([]);
  });

  it('"Don\'t share" refuses the call, saying the user declined', async () => {
    const { host, page } = await openApp(browser);
    const run = host.api.runService('take_screenshot', {});
    const dialog = page.getByTestId('screen-request');
    await dialog.waitFor();
    await dialog.getByRole('button', { name: en.screen.decline }).click();
    expect(await run).toMatchObject({
      ok: false,
      code: 'denied',
      message: 'the user declined to share the screen; nothing was captured',
    });
  });
});
