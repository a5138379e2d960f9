/**
 * End-to-end: choosing what one connection is offered, as a user does it. An MCP endpoint with a
 * tool limit of 2 is added in Connections; the Services page says it is offered more than that
 * (visibly, in a live region); the user picks two services for it in the dialog; the endpoint's
 * tools/list then holds exactly those two, and its call to a service it was not given is refused,
 * asks nobody, and shows in Activity as refused.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EndpointSim } from '../../sim/endpoint/server.js';
import { en } from '../../renderer/i18n/en.js';
import { BUILTIN_NAMES } from '../helpers/builtins.js';
import { accessibilityViolations } from './axe.js';
import { cleanup, dismissToasts, goTo, launchBrowser, openApp, text } from './harness.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

async function addEndpoint(page: Page, name: string, url: string, toolLimit: string) {
  await goTo(page, 'connections');
  await page.getByTestId('connection-add').click();
  const form = page.getByTestId('profile-form');
  await form.getByTestId('profile-kind').selectOption('endpoint');
  await page.locator('[data-testid="profile-form"][data-kind="endpoint"]').waitFor();
  await form.getByTestId('profile-name').fill(name);
  await form.getByTestId('profile-url').fill(url);
  // The kind's usual limit is suggested; the user types their server's.
  expect(await form.getByTestId('profile-toolLimit').getAttribute('placeholder')).toBe('32');
  await form.getByTestId('profile-toolLimit').fill(toolLimit);
  await form.getByTestId('profile-save-connect').click();
  await form.waitFor({ state: 'detached' });
  await dismissToasts(page);
}

describe('what each connection is offered', { timeout: 60_000 }, () => {
  it('choosing two services for an endpoint: its tools/list holds exactly those, a call to another is refused and audited', async () => {
    const sim = await EndpointSim.start();
    cleanup(() => sim.stop());
    const { page, errors } = await openApp(browser);
    const name = 'Desk endpoint';
    await addEndpoint(page, name, sim.url, '2');
    await sim.waitForTools((t) => t.length === BUILTIN_NAMES.length, 10_000);

    await goTo(page, 'services');
    const row = page.locator('[data-testid^="offer-row-"]', { hasText: name });
    await expect.poll(() => row.getAttribute('data-over')).toBe('true');
    const warning = row.locator('[data-testid^="offer-warn-"]');
    expect(await warning.isVisible()).toBe(true);
    expect(await text(warning)).toContain(en.offers.overLimit.replace('{{limit}}', '2'));
    // The warning sits in a live region, so it is announced as well as shown.
    expect(await warning.locator('xpath=..').getAttribute('role')).toBe('status');

    await row.locator('[data-testid^="offer-choose-"]').click();
    const dialog = page.getByTestId('offer-dialog');
    await dialog.waitFor();
    await dialog.getByTestId('offer-select-none').click();
    await dialog.getByTestId('offer-find').fill('time');
    await dialog.getByTestId('offer-choice-get_current_time').check();
    await dialog.getByTestId('offer-find').fill('');
    await dialog.getByTestId('offer-choice-list_reminders').check();
    expect(await text(dialog.getByTestId('offer-selected'))).toContain('2 selected');
    // The dialog and the list behind it pass axe's WCAG A/AA rules, over-limit warning included.
    expect(await accessibilityViolations(page)).toEqual([]);
    // A fixed set: nothing new flows to this capped server without the user.
    await dialog.getByTestId('offer-auto-new').uncheck();
    await dialog.getByTestId('offer-save').click();
    await dialog.waitFor({ state: 'detached' });

    const listed = await sim.waitForTools(
      (t) => t.length === 2 && t.every((tool) => tool.name !== 'create_file'),
      10_000,
    );
    expect(listed.map((t) => t.name).sort()).toEqual(['get_current_time', 'list_reminders']);
    await expect.poll(() => row.getAttribute('data-over')).toBe('false');
    expect(await row.getAttribute('data-count')).toBe('2');
    expect(await text(row.locator('[data-testid^="offer-count-"]'))).toContain('2 offered');

    // The endpoint tries a service it was not given: refused as unknown, nobody asked.
    const refused = await sim.callTool('create_file', { filename: 'no.txt', content: 'x' });
    expect(refused.isError).toBe(true);
    expect(await page.getByTestId('prompt-modal').count()).toBe(0);
    expect((await sim.callTool('get_current_time', {})).isError).toBe(false);

    await goTo(page, 'activity');
    await page.getByTestId('audit-filter-service').selectOption('create_file');
    await expect.poll(() => page.getByTestId('audit-row').count()).toBe(1);
    const audited = await text(page.getByTestId('audit-row'));
    expect(audited).toContain('create_file');
    expect(audited).toContain(name);
    expect(audited).toContain(en.outcome.refused);
    expect(errors).toEqual([]);
  });
});
