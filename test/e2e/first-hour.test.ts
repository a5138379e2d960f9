/**
 * End-to-end, the first hour as a newcomer and a keyboard user meet it (issue 14): a page with a
 * missing or old key, a reload while a prompt waits, the prompt's buttons by keyboard, "always
 * allow" visible where the policy is, Activity at 800×600, the mood face without an emoji font,
 * and the Settings form saying what is wrong.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { en } from '../../renderer/i18n/en.js';
import {
  by,
  cleanup,
  goTo,
  launchBrowser,
  openApp,
  openPage,
  promptUp,
  say,
  startHost,
  text,
} from './harness.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

/** The data-testid of the focused element. */
const focused = (page: Page) =>
  page.evaluate('document.activeElement?.getAttribute("data-testid") ?? ""');

async function startDemo(page: Page): Promise<void> {
  await page.getByTestId('demo-start').click();
  await page.locator(by('connection-banner', { state: 'ready' })).waitFor();
}

describe('the first hour', { timeout: 60_000 }, () => {
  it('a page whose address has no key, or an old one, says so and where the right address is, instead of loading forever', async () => {
    const host = await startHost();
    cleanup(() => host.stop());
    const wrong = new URL(host.url);
    wrong.searchParams.set('token', 'a'.repeat(64));
    const bare = new URL(host.url);
    bare.searchParams.delete('token');
    for (const url of [wrong.href, bare.href]) {
      const { page } = await openPage(browser, url);
      cleanup(() => page.context().close());
      const refused = page.getByTestId('bridge-refused');
      await refused.waitFor({ timeout: 15_000 });
      expect(await text(refused)).toContain(en.bridge.refusedTitle);
      expect(await text(refused)).toContain('advent-agent ui');
      expect(await page.locator('.page-loading').count()).toBe(0);
    }
  });

  it('the browser host says a token goes into secrets.json in its data folder, as Settings does, never "keychain"', async () => {
    const { page, errors } = await openApp(browser);
    await goTo(page, 'connections');
    await page.getByTestId('connection-add').click();
    const token = page.getByTestId('profile-token');
    const helpId = (await token.getAttribute('aria-describedby'))!.split(' ')[0]!;
    const help = await text(page.locator(`[id="${helpId}"]`));
    expect(help).toBe(en.secrets.tokenNew.file);
    expect(help).not.toMatch(/keychain/i);
    await goTo(page, 'settings');
    expect(await text(page.getByTestId('settings-secrets'))).toBe(en.secrets.place.file);
    expect(errors).toEqual([]);
  });

  it('reloading the page while a prompt waits shows the same prompt again, and answering it runs the call', async () => {
    const { page } = await openApp(browser);
    await startDemo(page);
    await say(page, 'write a note: buy milk');
    const id = await (await promptUp(page)).getAttribute('data-prompt-id');

    await page.reload();
    const again = await promptUp(page);
    expect(await again.getAttribute('data-prompt-id')).toBe(id);
    await page.locator('[data-testid="prompt-allow-once"]:enabled').click();
    await again.waitFor({ state: 'detached' });
    const card = page.locator(by('tool-card', { service: 'create_file', state: 'done' }));
    await card.waitFor();
    expect(await text(card.getByTestId('tool-decision'))).toBe(en.decision['allowed-once']);
    expect(await text(card.getByTestId('tool-outcome'))).toBe(en.outcome.ok);
  });

  it('the prompt reads Deny | Allow once | More by Tab; the lasting grants sit in a keyboard menu', async () => {
    const { page, errors } = await openApp(browser);
    await startDemo(page);
    await say(page, 'write a note: buy milk');
    const modal = await promptUp(page);
    await page.locator('[data-testid="prompt-allow-once"]:enabled').waitFor();
    expect(await focused(page)).toBe('prompt-deny');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('prompt-allow-once');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('prompt-more');
    expect(await modal.getByTestId('prompt-more').getAttribute('aria-haspopup')).toBe('menu');
    // No lasting grant is one key away from Deny.
    expect(await modal.getByTestId('prompt-always').count()).toBe(0);

    await page.keyboard.press('Enter');
    const menu = modal.getByRole('menu');
    await menu.waitFor();
    expect(await focused(page)).toBe('prompt-allow-session');
    await page.keyboard.press('ArrowDown');
    expect(await focused(page)).toBe('prompt-always');
    // Esc closes the menu only: the prompt stays, focus back on More.
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'detached' });
    expect(await modal.isVisible()).toBe(true);
    expect(await focused(page)).toBe('prompt-more');

    await page.keyboard.press('ArrowDown');
    await menu.waitFor();
    expect(await focused(page)).toBe('prompt-allow-session');
    await page.keyboard.press('Enter');
    await modal.waitFor({ state: 'detached' });
    const card = page.locator(by('tool-card', { service: 'create_file', state: 'done' }));
    await card.waitFor();
    expect(await text(card.getByTestId('tool-decision'))).toBe(en.decision['allowed-session']);
    expect(errors).toEqual([]);
  });

  it('"always allow" shows on the service row where its policy is, and revoking it there brings "ask" back', async () => {
    const { page, errors } = await openApp(browser);
    await startDemo(page);
    await say(page, 'write a note: buy milk');
    const modal = await promptUp(page);
    await page.locator('[data-testid="prompt-allow-once"]:enabled').waitFor();
    await modal.getByTestId('prompt-more').click();
    await modal.getByTestId('prompt-always').click();
    await page.locator(by('tool-card', { service: 'create_file', state: 'done' })).waitFor();

    await goTo(page, 'services');
    const row = page.getByTestId('service-create_file');
    const policy = row.getByTestId('service-policy-create_file');
    await expect
      .poll(async () => policy.locator('option:checked').textContent())
      .toBe(en.policy.granted);
    expect(await text(row.getByTestId('service-grants-create_file'))).toContain(en.grants.all);
    await row.getByTestId('service-revoke-create_file').click();
    await expect
      .poll(async () => policy.locator('option:checked').textContent())
      .toBe(en.policy.ask);
    expect(await row.getByTestId('service-grants-create_file').count()).toBe(0);
    expect(errors).toEqual([]);
  });

  it('a refusal reads as one short line for people; the sentence written for the AI is folded away (chat card, Activity); Try it shows its reason', async () => {
    const { page, errors } = await openApp(browser);
    await startDemo(page);
    await say(page, 'write a note: buy milk');
    await (await promptUp(page)).getByTestId('prompt-deny').click();
    const card = page.locator(by('tool-card', { service: 'create_file', state: 'done' }));
    await card.waitFor();
    expect(await text(card.getByTestId('tool-refusal-line'))).toBe(en.errorCode.denied);
    const seen = (locator: ReturnType<Page['locator']>) => locator.innerText();
    expect(await seen(card)).not.toMatch(/do not retry|declined to let/);
    // Folded, not lost: opening it shows what the server was told.
    const folded = card.getByTestId('tool-model-message');
    await folded.locator('summary').click();
    expect(await seen(folded)).toMatch(/do not retry unless the user asks again/);

    await card.getByTestId('tool-audit-link').click();
    const drawer = page.getByTestId('audit-drawer');
    await drawer.waitFor();
    expect(await seen(drawer)).toContain(en.errorCode.denied);
    expect(await seen(drawer)).not.toMatch(/do not retry/);

    await goTo(page, 'services');
    const row = page.getByTestId('service-create_file');
    // The human summary shows; the model-facing description waits under "What the AI is told".
    expect(await seen(row)).toContain('Writes a new text file in your allowed folders');
    expect(await seen(row)).not.toContain("Create a text file in the user's allowed folder");
    await row.getByTestId('service-try-create_file').locator('summary').first().click();
    const told = row.getByTestId('service-description-create_file');
    expect(await text(told.locator('summary'))).toBe(en.services.aiIsTold);
    await row.getByTestId('field-create_file-filename').fill('../outside.txt');
    await row.getByTestId('field-create_file-content').fill('x');
    await row.getByTestId('service-run-create_file').click();
    const result = row.getByTestId('service-result-create_file');
    await result.locator('.run-error').waitFor();
    expect(await seen(result)).toContain(en.errorCode.path_outside_roots);
    // The user's own run: no server was told anything, and the reason is for them, so it shows.
    expect(await seen(result)).toMatch(/use a path inside/);
    expect(await seen(result)).not.toContain(en.refusal.serverWasTold);
    expect(errors).toEqual([]);
  });

  it('at 800×600 the sidebar shrinks to icons, Activity shows its key columns and many rows, and the details do not cover them', async () => {
    const { page, host, errors } = await openApp(browser);
    for (let i = 0; i < 14; i++) await host.api.runService('get_current_time', {});
    await page.setViewportSize({ width: 800, height: 600 });
    await goTo(page, 'activity');
    await expect.poll(() => page.getByTestId('audit-row').count()).toBeGreaterThan(6);

    const nav = await page.locator('nav.nav').boundingBox();
    expect(nav!.width).toBeLessThanOrEqual(72);
    // The page names stay the links' accessible names.
    expect(await page.getByRole('link', { name: en.nav.activity }).count()).toBe(1);

    const inView = async (selector: string) => {
      const box = await page.locator(selector).first().boundingBox();
      return !!box && box.x >= 0 && box.x + box.width <= 800 && box.y + box.height <= 600;
    };
    for (const col of ['col-service', 'col-decision', 'col-outcome', 'col-duration'])
      expect(await inView(`.audit-row-head .${col}`), col).toBe(true);
    const rowsInView = async () => {
      let n = 0;
      for (const row of await page.getByTestId('audit-row').all()) {
        const b = await row.boundingBox();
        if (b && b.y >= 0 && b.y + b.height <= 600) n += 1;
      }
      return n;
    };
    expect(await rowsInView()).toBeGreaterThanOrEqual(6);

    await page.getByTestId('audit-row').first().click();
    const drawer = page.getByTestId('audit-drawer');
    await drawer.waitFor();
    const d = (await drawer.boundingBox())!;
    const firstRow = (await page.getByTestId('audit-row').first().boundingBox())!;
    const overlaps =
      d.x < firstRow.x + firstRow.width &&
      firstRow.x < d.x + d.width &&
      d.y < firstRow.y + firstRow.height &&
      firstRow.y < d.y + d.height;
    expect(overlaps).toBe(false);
    for (const col of ['col-decision', 'col-outcome', 'col-duration'])
      expect(await inView(`[data-testid="audit-row"] .${col}`), col).toBe(true);
    expect(errors).toEqual([]);
  });

  it('the mood face is the app’s own picture: no emoji character anywhere on the chat page', async () => {
    const { page, errors } = await openApp(browser);
    await startDemo(page);
    await say(page, 'what time is it');
    await page.locator(by('chat-assistant', { state: 'done' })).waitFor();
    const mood = page.getByTestId('mood');
    expect(await mood.locator('svg').count()).toBe(1);
    expect(await mood.getAttribute('aria-label')).toMatch(/^Mood: /);
    const body = await page.locator('body').innerText();
    expect(body).not.toMatch(/\p{Extended_Pictographic}/u);
    expect(errors).toEqual([]);
  });

  it('Settings: a prompt timeout below 5 says why on the field; a disabled select looks disabled', async () => {
    const { page, errors } = await openApp(browser);
    await startDemo(page);
    await goTo(page, 'settings');
    const field = page.getByTestId('settings-timeout');
    await field.fill('3');
    const error = page.getByTestId('settings-timeout-error');
    await error.waitFor();
    expect(await text(error)).toBe(en.settings.timeoutInvalid);
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    const described = (await field.getAttribute('aria-describedby')) ?? '';
    expect(described.split(' ')).toContain(await error.getAttribute('id'));
    expect(await page.getByTestId('settings-save').isDisabled()).toBe(true);
    await field.fill('30');
    await error.waitFor({ state: 'detached' });

    // The demo's voice options are fixed: its selects are disabled, and must look it.
    const looks = (selector: string) =>
      page.evaluate(
        `(() => { const s = getComputedStyle(document.querySelector(${JSON.stringify(selector)}));` +
          ` return [s.opacity, s.color, s.backgroundColor, s.cursor].join('|'); })()`,
      ) as Promise<string>;
    const disabled = await looks('.settings select:disabled');
    const enabled = await looks('[data-testid="settings-language"]');
    expect(disabled).not.toBe(enabled);
    expect(errors).toEqual([]);
  });
});
