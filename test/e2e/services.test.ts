/**
 * End-to-end: what the Services page changes for the server (switching a service off, "always
 * allow" and revoking it), and what the user sees when the server goes away and comes back.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdventSim } from '../../sim/advent/server.js';
import { en } from '../../renderer/i18n/en.js';
import {
  by,
  cleanup,
  connectThroughUi,
  freePort,
  goTo,
  lastRegistered,
  launchBrowser,
  openApp,
  promptUp,
  say,
  startSim,
  text,
} from './harness.js';
import { BUILTIN_NAMES, builtinsWithout } from '../helpers/builtins.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

/** Every built-in service, as the server lists them (sorted). */
const BOTH = [...BUILTIN_NAMES].sort();

describe('services and connections', { timeout: 60_000 }, () => {
  it('switching create_file off re-registers without it, and a later call is refused as switched off', async () => {
    const sim = await startSim();
    const { page, errors } = await openApp(browser);
    await connectThroughUi(page, sim);
    expect(lastRegistered(sim)).toEqual(BOTH);
    const registers = sim.registrations().length;

    await goTo(page, 'services');
    const toggle = page.getByTestId('service-switch-create_file');
    expect(await toggle.getAttribute('aria-checked')).toBe('true');
    await toggle.click();
    await page
      .locator('[data-testid="service-switch-create_file"][aria-checked="false"]')
      .waitFor();

    await expect.poll(() => sim.registrations().length).toBe(registers + 1);
    expect(lastRegistered(sim)).toEqual(builtinsWithout('create_file').sort());

    const result = await sim.peer().call('create_file', { filename: 'off.txt', content: 'x' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/switched off/);
    expect(await page.getByTestId('prompt-modal').count()).toBe(0);

    // Back on: offered again.
    await toggle.click();
    await expect.poll(() => lastRegistered(sim)).toEqual(BOTH);
    expect(errors).toEqual([]);
  });

  it('always allow: the next call runs without asking; revoking it on the Services page brings the question back', async () => {
    const sim = await startSim();
    const { page, errors } = await openApp(browser);
    await connectThroughUi(page, sim);
    const peer = sim.peer();

    const first = peer.call('create_file', { filename: 'a.txt', content: 'a' });
    const asked = await promptUp(page);
    await asked.locator('[data-testid="prompt-more"]:enabled').click();
    await asked.getByTestId('prompt-always').click();
    expect(await first).toMatchObject({ success: true });
    await page.getByTestId('prompt-modal').waitFor({ state: 'detached' });

    // No prompt this time: the call returns although nobody answers anything (a prompt would
    // hold it for the 60 s prompt timeout, far past the call's own 10 s).
    expect(await peer.call('create_file', { filename: 'b.txt', content: 'b' })).toMatchObject({
      success: true,
    });
    expect(await page.getByTestId('prompt-modal').count()).toBe(0);
    const cards = page.locator(by('tool-card', { service: 'create_file', state: 'done' }));
    await expect.poll(() => cards.count()).toBe(2);
    expect(await text(cards.nth(1).getByTestId('tool-decision'))).toBe(
      en.decision['allowed-always'],
    );

    await goTo(page, 'services');
    const revoke = page.getByTestId('service-revoke-create_file');
    await revoke.click();
    await revoke.waitFor({ state: 'detached' });

    const third = peer.call('create_file', { filename: 'c.txt', content: 'c' });
    const modal = await promptUp(page);
    expect(await text(modal.getByTestId('prompt-summary'))).toMatch(/^Create file c\.txt /);
    await modal.getByTestId('prompt-deny').click();
    expect(await third).toMatchObject({ success: false });
    expect(errors).toEqual([]);
  });

  it('the server restarts: the banner shows reconnecting, then connected again, and the new server gets both services', async () => {
    const port = await freePort();
    const first = await AdventSim.start({ demo: true, port });
    cleanup(() => first.stop());
    const { page, errors } = await openApp(browser);
    await connectThroughUi(page, first);

    await first.stop();
    await page.locator(by('connection-banner', { state: 'reconnecting' })).waitFor();
    expect(await page.getByTestId('chat-input').isDisabled()).toBe(true);

    const second = await startSim({ demo: true, port });
    await page.locator(by('connection-banner', { state: 'ready' })).waitFor({ timeout: 15_000 });
    await expect.poll(() => second.registrations().length).toBeGreaterThan(0);
    expect(Object.keys(second.registrations()[0]!).sort()).toEqual(BOTH);

    // And the conversation goes on with the new server.
    await say(page, 'what time is it');
    await page
      .locator(by('chat-assistant', { state: 'done' }))
      .filter({ hasText: "It's" })
      .waitFor();
    // The server's restart is the core's business: the page itself logs nothing about it.
    expect(errors).toEqual([]);
  });
});
