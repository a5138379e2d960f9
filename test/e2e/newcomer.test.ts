/**
 * End-to-end, what a newcomer review found: a failed MCP server's long unbroken error widened its
 * card past the page; a failed "Try it" hid its reason under "What the server was told"; and the
 * focus fell to the page's body after "Try the demo server", "Paste JSON" and "Add server".
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { en } from '../../renderer/i18n/en.js';
import { by, dismissToasts, goTo, launchBrowser, openApp, text } from './harness.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

/** The data-testid of the focused element ("" for the body). */
const focused = (page: Page) =>
  page.evaluate('document.activeElement?.getAttribute("data-testid") ?? ""');

/** Elements of the page wider inside than they show (a horizontal scrollbar, or clipped content). */
const OVERFLOWING = `(() => {
  const wide = [];
  for (const el of [document.documentElement, ...document.querySelectorAll('body *')]) {
    const style = getComputedStyle(el);
    const scrolls = el === document.documentElement || /auto|scroll/.test(style.overflowX);
    if (scrolls && el.scrollWidth > el.clientWidth + 1)
      wide.push((el.className || el.tagName) + ': ' + el.scrollWidth + ' > ' + el.clientWidth);
  }
  return wide;
})()`;

async function goToMcp(page: Page): Promise<void> {
  await page.getByTestId('nav-mcp').click();
  await page.locator('[data-testid="nav-mcp"][aria-current="page"]').waitFor();
}

describe('after the newcomer review', { timeout: 60_000 }, () => {
  it('a failed MCP server whose error is one long unbroken PATH wraps it: no sideways scrolling, its state and Remove in view', async () => {
    const { page, errors, host } = await openApp(browser);
    // What a missing program says: the command and the PATH searched, with no space or hyphen
    // (where a line may break) in either, each longer than the card is wide.
    const dirs = Array.from({ length: 6 }, (_, i) => `/opt/${'deepfolder'.repeat(4)}${i}/bin`);
    await host.api.saveMcpServer({
      name: 'weather',
      transport: 'stdio',
      command: `weathermcp${'x'.repeat(200)}`,
      args: ['--stdio'],
      env: { PATH: dirs.join(':') },
    });
    await goToMcp(page);
    const card = page.locator(by('mcp-server-weather', { state: 'failed' }));
    await card.waitFor({ timeout: 20_000 });
    await dismissToasts(page);
    expect(await text(page.getByTestId('mcp-reason-weather'))).toContain('searched PATH');

    expect(await page.evaluate(OVERFLOWING)).toEqual([]);
    const viewport = page.viewportSize()!;
    for (const part of [
      card,
      page.getByTestId('mcp-state-weather'),
      page.getByTestId('mcp-remove-weather'),
    ]) {
      const box = (await part.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(viewport.width);
    }
    expect(errors).toEqual([]);
  });

  it('"Try it" that fails shows the reason itself, not folded under what a server was told', async () => {
    const { page, errors } = await openApp(browser);
    await goTo(page, 'services');
    const row = page.getByTestId('service-get_current_time');
    await row.getByTestId('service-try-get_current_time').locator('summary').first().click();
    await row.getByTestId('field-get_current_time-timezone').fill('Mars/Olympus');
    await row.getByTestId('service-run-get_current_time').click();
    const result = row.getByTestId('service-result-get_current_time');
    await result.locator('.run-error').waitFor();
    const seen = await result.innerText();
    expect(seen).toContain(en.errorCode.invalid_params);
    expect(seen).toMatch(/unknown time zone 'Mars\/Olympus'/);
    expect(seen).not.toContain(en.refusal.serverWasTold);
    expect(await result.getByTestId('service-result-message-get_current_time').isVisible()).toBe(
      true,
    );
    expect(errors).toEqual([]);
  });

  it('Enter on "Try the demo server" leaves the focus in the message box once it can be typed in', async () => {
    const { page, errors } = await openApp(browser);
    await page.getByTestId('demo-start').focus();
    await page.keyboard.press('Enter');
    await page.locator(by('connection-banner', { state: 'ready' })).waitFor();
    await expect.poll(() => focused(page), { timeout: 10_000 }).toBe('chat-input');
    // Typing goes straight in.
    await page.keyboard.type('what time is it');
    expect(await page.getByTestId('chat-input').inputValue()).toBe('what time is it');
    expect(errors).toEqual([]);
  });

  it('"Paste JSON" puts the focus in the box to paste into, "Import from…" on its panel, "Add server" on the name', async () => {
    const { page, errors } = await openApp(browser);
    await goToMcp(page);
    await page.getByTestId('mcp-paste').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('mcp-import').waitFor();
    expect(await focused(page)).toBe('mcp-import-json');
    await page.getByTestId('mcp-import-cancel').click();

    await page.getByTestId('mcp-import-from').focus();
    await page.keyboard.press('Enter');
    const panel = page.getByTestId('mcp-import');
    await panel.waitFor();
    const title = await page.evaluate('document.activeElement?.tagName ?? ""');
    expect(title).toBe('H2');
    expect(await text(panel.locator('h2'))).toBe(en.mcp.import.fromTitle);
    await page.getByTestId('mcp-import-cancel').click();

    await page.getByTestId('mcp-add').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('mcp-form').waitFor();
    expect(await focused(page)).toBe('mcp-form-name');
    expect(errors).toEqual([]);
  });
});
