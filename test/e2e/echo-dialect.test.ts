/**
 * The test-only fifth connection kind (test/dialects/echo/) in the real window: the Connections
 * form offers it and builds its fields from its spec, the page shows its badge and address, and
 * it chats — with no file of the renderer changed for it. In 简体中文 its own words are used.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../app/wire/dialects.js';
import { echoDialect } from '../dialects/echo/index.js';
import { EchoServer } from '../dialects/echo/server.js';
import { by, cleanup, dismissToasts, goTo, launchBrowser, openApp, say, text } from './harness.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('a connection kind added from outside the app', () => {
  it('appears in the form with its own fields, connects from the page, shows its badge and chats', async () => {
    const server = await EchoServer.start();
    cleanup(() => server.stop());
    const { page, errors } = await openApp(browser, { dialects: [...DIALECTS, echoDialect] });

    await goTo(page, 'connections');
    await page.getByTestId('connection-add').click();
    const form = page.getByTestId('profile-form');
    await form.getByTestId('profile-kind').selectOption('echo');
    await page.locator(by('profile-form', { kind: 'echo' })).waitFor();
    expect(
      await text(
        form.locator(
          '#' + (await form.getByTestId('profile-kind').getAttribute('aria-describedby')),
        ),
      ),
    ).toBe('A test server that repeats what you say and may call your services.');
    // Its own field, in its own section, checked by its own schema.
    await form.getByTestId('profile-name').fill('Echo lab');
    await form.getByTestId('profile-url').fill(server.url);
    await form.getByTestId('profile-prefix').fill('NOPE');
    await form.getByTestId('profile-save').click();
    expect(await text(form.locator('.field-error'))).toBe('Lowercase letters only.');
    await form.getByTestId('profile-prefix').fill('lab');
    await form.getByTestId('profile-save-connect').click();
    await form.waitFor({ state: 'detached' });
    await dismissToasts(page);

    const card = page.locator('[data-testid^="connection-p-"]');
    await card.and(page.locator('[data-state="ready"]')).waitFor();
    expect(await text(card.locator('[data-testid^="connection-kind-"]'))).toBe('Echo');
    expect(await text(card.locator('code'))).toBe(server.url);

    await goTo(page, 'chat');
    await say(page, 'hello from the page');
    await page.locator(by('chat-assistant'), { hasText: 'lab: hello from the page' }).waitFor();
    expect(server.said).toEqual(['hello from the page']);
    expect(errors).toEqual([]);
  });

  it('speaks 简体中文 with its own words', async () => {
    const { page } = await openApp(browser, {
      dialects: [...DIALECTS, echoDialect],
      locale: 'zh-CN',
    });
    await goTo(page, 'settings');
    await page.getByTestId('settings-language').selectOption('zh-CN');
    await goTo(page, 'connections');
    await page.getByTestId('connection-add').click();
    const kind = page.getByTestId('profile-kind');
    await kind.selectOption('echo');
    expect(await text(kind.locator('option[value="echo"]'))).toBe('回声服务器');
    expect(await text(page.getByTestId('profile-form').locator('label[for$="-prefix"]'))).toBe(
      '回复前缀',
    );
  });
});
