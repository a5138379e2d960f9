/**
 * End-to-end, as a user sees it: the first run with the demo server, a text turn with a tool call,
 * and the permission prompt's three endings (allow once, deny, no answer), in Debian's Chromium
 * against the real browser host and the simulated Advent server.
 */
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRIDGE_PATH } from '../../app/contract/bridge.js';
import { displayPath } from '../../app/services/files/display.js';
import { en } from '../../renderer/i18n/en.js';
import {
  by,
  cleanup,
  connectThroughUi,
  goTo,
  launchBrowser,
  openApp,
  promptUp,
  say,
  startSim,
  text,
} from './harness.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

/** Every file under `dir` (none if it does not exist). */
async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('chat and permissions', { timeout: 60_000 }, () => {
  it('first run: the welcome panel offers the demo and your own server; the demo answers "what time is it" with a tool call', async () => {
    const { page, errors } = await openApp(browser);

    const welcome = page.getByTestId('welcome');
    await welcome.waitFor();
    expect(await text(welcome.getByTestId('demo-start'))).toContain(en.welcome.demoTitle);
    expect(await text(welcome.getByTestId('add-server'))).toContain(en.welcome.addTitle);

    await welcome.getByTestId('demo-start').click();
    await page.locator(by('connection-banner', { state: 'ready' })).waitFor();
    expect(await welcome.count()).toBe(0);

    await say(page, 'what time is it');
    expect(await text(page.getByTestId('chat-user').locator('.bubble-text'))).toBe(
      'what time is it',
    );
    const card = page.locator(by('tool-card', { service: 'get_current_time', state: 'done' }));
    await card.waitFor();
    expect(await text(card.getByTestId('tool-decision'))).toBe(en.decision.auto);
    expect(await text(card.getByTestId('tool-outcome'))).toBe(en.outcome.ok);
    // Nobody was asked: one duration, no time for deciding.
    expect(await text(card)).not.toMatch(/you decided/);
    const reply = page.locator(by('chat-assistant', { state: 'done' }));
    await reply.waitFor();
    expect(await text(reply.locator('.bubble-text'))).toMatch(/^It's .+\.$/);
    // The composer is cleared and ready for the next message.
    expect(await page.getByTestId('chat-input').inputValue()).toBe('');

    expect(errors).toEqual([]);
  });

  it('allow once: a profile added in Connections, "write a note" asks first, then the file is written and recorded', async () => {
    const sim = await startSim();
    const { host, page, errors } = await openApp(browser);
    await connectThroughUi(page, sim);
    expect(sim.lastAuth()?.token).toBe('e2e-token');

    await say(page, 'write a note: buy milk');
    const modal = await promptUp(page);
    const summary = await text(modal.getByTestId('prompt-summary'));
    expect(summary).toMatch(/^Create file notes\/note-\d{8}-\d{6}\.txt \(.+\) in .+$/);
    expect(summary.endsWith(` in ${displayPath(host.filesRoot)}`)).toBe(true);
    const relative = /notes\/note-\d{8}-\d{6}\.txt/.exec(summary)![0];
    const target = path.join(host.filesRoot, relative);
    expect(await text(modal.getByTestId('prompt-paths'))).toBe(target);
    // Deny has the focus, so a stray Enter or Space cannot approve anything.
    await expect
      .poll(() => page.evaluate('document.activeElement?.getAttribute("data-testid")'))
      .toBe('prompt-deny');
    // While it waits, the chat shows the call as waiting.
    await page.locator(by('tool-card', { service: 'create_file', state: 'waiting' })).waitFor();

    await modal.getByTestId('prompt-allow-once').click();
    await modal.waitFor({ state: 'detached' });
    await page
      .locator(by('chat-assistant', { state: 'done' }))
      .filter({ hasText: 'Saved it as' })
      .waitFor();
    expect(await readFile(target, 'utf8')).toBe('buy milk');

    const card = page.locator(by('tool-card', { service: 'create_file', state: 'done' }));
    expect(await text(card.getByTestId('tool-decision'))).toBe(en.decision['allowed-once']);
    expect(await text(card.getByTestId('tool-outcome'))).toBe(en.outcome.ok);
    // The time the user spent deciding is said apart from the service's own.
    expect(await text(card)).toMatch(/\d+ ms · you decided in \d+\.\d s/);

    // The card's audit link opens Activity on that very record.
    const seq = Number((/\d+/.exec(await text(card.getByTestId('tool-audit-link'))) ?? [])[0]);
    await card.getByTestId('tool-audit-link').click();
    await page.locator('[data-testid="nav-activity"][aria-current="page"]').waitFor();
    const drawer = page.locator(by('audit-drawer', { seq }));
    await drawer.waitFor();
    expect(await text(drawer)).toContain(en.decision['allowed-once']);
    expect(await text(drawer)).toContain('create_file');
    const row = page.locator(by('audit-row', { seq }));
    expect(await text(row)).toContain('create_file');
    expect(await text(row)).toContain(en.decision['allowed-once']);

    expect(errors).toEqual([]);
  });

  it('deny: the server gets success:false with the reason and no file is written', async () => {
    const sim = await startSim();
    const { host, page, errors } = await openApp(browser);
    await connectThroughUi(page, sim);

    // A call the test makes as the server: the exact result the server receives.
    const call = sim.peer().call('create_file', { filename: 'secret.txt', content: 'plans' });
    const modal = await promptUp(page);
    expect(await text(modal.getByTestId('prompt-summary'))).toMatch(/^Create file secret\.txt /);
    await modal.getByTestId('prompt-deny').click();
    const result = await call;
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/declined/);
    await modal.waitFor({ state: 'detached' });
    const card = page.locator(by('tool-card', { service: 'create_file', state: 'done' }));
    await card.waitFor();
    expect(await text(card.getByTestId('tool-decision'))).toBe(en.decision.denied);
    // Nothing ran: only the deciding is timed, no run time made up from it.
    expect(await text(card)).not.toMatch(/\d+ ms · you decided/);
    expect(await text(card)).toMatch(/you decided in \d+\.\d s/);

    // The same through the demo's conversation: its reply says why like a person would, never
    // the sentence written for the model.
    await say(page, 'write a note: secret plans');
    await (await promptUp(page)).getByTestId('prompt-deny').click();
    const reply = page
      .locator(by('chat-assistant', { state: 'done' }))
      .filter({ hasText: 'You said no' });
    await reply.waitFor();
    expect(await text(reply)).toMatch(/^You said no, so I didn't save the note\./);
    expect(await text(reply)).not.toMatch(/declined|retry/);

    expect(await filesUnder(host.filesRoot)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('the server stops waiting: the prompt leaves with a notice, the card says so, nothing is written', async () => {
    const sim = await startSim();
    const { host, page, errors } = await openApp(browser);
    await connectThroughUi(page, sim);

    const call = sim.peer().call('create_file', { filename: 'gone.txt', content: 'x' });
    const modal = await promptUp(page);
    // Advent has no cancel: the server ending the connection is how it stops waiting.
    await sim.peer().drop();
    await expect(call).rejects.toThrow();
    await modal.waitFor({ state: 'detached' });
    const notice = page.getByTestId('toast').filter({ hasText: 'stopped waiting' });
    await notice.first().waitFor();
    expect(await text(notice.first())).toMatch(
      /stopped waiting for “Create file”.*Nothing was run/,
    );
    const card = page.locator(by('tool-card', { service: 'create_file', state: 'done' }));
    await card.waitFor();
    expect(await text(card.getByTestId('tool-decision'))).toBe(en.decision.withdrawn);
    expect(await text(card.getByTestId('tool-outcome'))).toBe(en.outcome.cancelled);
    expect(await text(card.getByTestId('tool-refusal-line'))).toBe(en.tool.withdrawn);
    expect(await filesUnder(host.filesRoot)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('no answer: the prompt counts down, closes by itself and the server hears it timed out', async () => {
    const sim = await startSim();
    const { host, page, errors } = await openApp(browser, { args: ['--prompt-timeout', '2'] });
    await connectThroughUi(page, sim);

    const call = sim.peer().call('create_file', { filename: 'late.txt', content: 'x' });
    const modal = await promptUp(page);
    expect(await text(modal.getByTestId('prompt-countdown'))).toMatch(
      /^Denied automatically in [0-2] s$/,
    );
    const result = await call;
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/did not answer .* in time/);
    await modal.waitFor({ state: 'detached', timeout: 10_000 });
    const card = page.locator(by('tool-card', { service: 'create_file', state: 'done' }));
    await card.waitFor();
    expect(await text(card.getByTestId('tool-decision'))).toBe(en.decision.timeout);
    expect(await filesUnder(host.filesRoot)).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('security: a page from another origin cannot open the bridge, even with the token', async () => {
    const { host, page, errors } = await openApp(browser);
    const hostUrl = new URL(host.url);
    const token = hostUrl.searchParams.get('token')!;
    const bridge = `ws://${hostUrl.host}${BRIDGE_PATH}?token=${token}`;

    // Opens a WebSocket from inside a page; resolves with how it ended.
    const tryBridge = `new Promise((resolve) => {
      const ws = new WebSocket(${JSON.stringify(bridge)});
      ws.onopen = () => { ws.close(); resolve('open'); };
      ws.onerror = () => resolve('error');
      ws.onclose = (e) => resolve('closed ' + e.code);
    })`;

    // Control: the app's own origin can (so the refusal below is the Origin check, not the URL).
    expect(await page.evaluate(tryBridge)).toBe('open');

    // Another site on another loopback port.
    const site = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><title>elsewhere</title><p>another site</p>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    cleanup(
      () =>
        new Promise<void>((resolve) => {
          site.close(() => resolve());
          site.closeAllConnections();
        }),
    );
    const other = await page.context().newPage();
    await other.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
    expect(await other.evaluate(tryBridge)).toBe('error');

    // And a page with an opaque origin (a data: URL).
    await other.goto('data:text/html,<title>opaque</title>');
    expect(await other.evaluate(tryBridge)).toBe('error');
    await other.close();

    // The app itself never noticed.
    await goTo(page, 'chat');
    await page.getByTestId('welcome').waitFor();
    expect(errors).toEqual([]);
  });
});
