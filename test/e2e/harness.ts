/**
 * End-to-end harness: the real browser host (advent-agent ui, in-process) serving the built
 * renderer, Debian's Chromium driven by playwright-core, and the simulator as the server.
 */
import { mkdir } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type Browser, type Locator, type Page } from 'playwright-core';
import { expect, onTestFinished } from 'vitest';
import { AdventSim, type AdventSimOptions } from '../../sim/advent/server.js';
import { type UiHost, repo, startHost } from './host.js';
import type { Dialect } from '../../app/wire/dialect.js';

export * from './host.js';

/**
 * Screenshots go to docs/screenshots only when asked (`SCREENSHOTS=1 npx vitest run test/e2e`), so
 * an ordinary test run does not rewrite the committed images; otherwise to a temp folder.
 */
export const shotsDir =
  process.env.SCREENSHOTS === '1'
    ? path.join(repo, 'docs', 'screenshots')
    : path.join(os.tmpdir(), 'advent-e2e-screenshots');

/** A fresh page on the host's URL, with console errors collected for the test to check. */
export async function openPage(
  browser: Browser,
  url: string,
  locale = 'en-US',
): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ locale, viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.goto(url);
  return { page, errors };
}

// ---------------------------------------------------------------------------------------------
// Per-test helpers: everything a test opens is closed when it finishes, pass or fail.

export interface App {
  host: UiHost;
  page: Page;
  /** Console errors and uncaught page errors, in order. */
  errors: string[];
}

/** Run `fn` when the current test finishes (in reverse order of registration). */
export function cleanup(fn: () => Promise<unknown> | unknown): void {
  onTestFinished(async () => {
    await fn();
  });
}

/**
 * A fresh host (own data folder and files root) and a fresh browser context on its page, with
 * the app loaded and its bridge open. Both go away when the test finishes; a failing test leaves
 * a screenshot of the page in the system's temp folder for the log to point at.
 */
export async function openApp(
  browser: Browser,
  opts: { args?: string[]; locale?: string; dialects?: readonly Dialect[] } = {},
): Promise<App> {
  const host = await startHost(opts.args, { dialects: opts.dialects });
  cleanup(() => host.stop());
  const { page, errors } = await openPage(browser, host.url, opts.locale);
  onTestFinished(async ({ task }) => {
    if (task.result?.state === 'fail') {
      const file = path.join(os.tmpdir(), 'advent-e2e-failures', `${slug(task.name)}.png`);
      await mkdir(path.dirname(file), { recursive: true });
      await page.screenshot({ path: file }).then(
        () => console.error(`e2e: the page when "${task.name}" failed: ${file}`),
        () => undefined,
      );
    }
    await page.context().close();
  });
  // The app is up once its navigation is rendered and the bridge has delivered a snapshot.
  await page.getByTestId('nav-chat').waitFor();
  // Locators, not a waitForFunction string: polling one evaluates it, which the page's CSP
  // (no 'unsafe-eval') refuses whenever the bridge is not up at the first look.
  await page.getByTestId('bridge-status').waitFor({ state: 'detached' });
  await page.locator('.page-loading').waitFor({ state: 'detached' });
  return { host, page, errors };
}

/** A simulated Advent server for this test, stopped when it finishes. */
export async function startSim(options: AdventSimOptions = { demo: true }): Promise<AdventSim> {
  const sim = await AdventSim.start(options);
  cleanup(() => sim.stop());
  return sim;
}

/** A loopback port that was free a moment ago (a throwaway server picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The text of the first element matching (waiting for it to exist), trimmed. */
export async function text(locator: Locator): Promise<string> {
  return ((await locator.first().textContent({ timeout: 10_000 })) ?? '').trim();
}

/** `[data-testid=id]` plus attribute conditions: `by('tool-card', {service: 'x', state: 'done'})`. */
export function by(testId: string, attrs: Record<string, string | number | boolean> = {}): string {
  const extra = Object.entries(attrs)
    .map(([k, v]) => `[data-${k}="${String(v)}"]`)
    .join('');
  return `[data-testid="${testId}"]${extra}`;
}

export async function goTo(
  page: Page,
  name: 'chat' | 'services' | 'activity' | 'connections' | 'settings',
): Promise<void> {
  await page.getByTestId(`nav-${name}`).click();
  await page.locator(`[data-testid="nav-${name}"][aria-current="page"]`).waitFor();
}

/**
 * Add a connection to `sim` the way a user does: Connections → Add → name, host, port, token →
 * Save and connect; resolves once the chat banner says connected and the server has the services.
 */
export async function connectThroughUi(
  page: Page,
  sim: AdventSim,
  name = 'Test server',
): Promise<void> {
  const before = sim.registrations().length;
  await goTo(page, 'connections');
  await page.getByTestId('connection-add').click();
  const form = page.getByTestId('profile-form');
  await form.getByTestId('profile-name').fill(name);
  await form.getByTestId('profile-host').fill('127.0.0.1');
  await form.getByTestId('profile-port').fill(String(sim.port));
  await form.getByTestId('profile-token').fill('e2e-token');
  await form.getByTestId('profile-save-connect').click();
  await form.waitFor({ state: 'detached' });
  await dismissToasts(page);
  await goTo(page, 'chat');
  await page.locator(by('connection-banner', { state: 'ready' })).waitFor();
  await expect.poll(() => sim.registrations().length, { timeout: 10_000 }).toBeGreaterThan(before);
}

/**
 * Close every toast with its button, as a user would. Toasts sit over the top right corner of the
 * page, where the page headers keep their action buttons (Export, Verify), for 4–15 s.
 */
export async function dismissToasts(page: Page): Promise<void> {
  const toasts = page.getByTestId('toast');
  while ((await toasts.count()) > 0) {
    // One may close by itself meanwhile; then the next (or none) is what is left.
    await toasts
      .first()
      .getByRole('button')
      .click({ timeout: 2000 })
      .catch(() => undefined);
  }
}

/** Type a message in the chat box and press Enter. */
export async function say(page: Page, message: string): Promise<void> {
  const input = page.getByTestId('chat-input');
  await input.fill(message);
  await input.press('Enter');
}

/** The permission prompt once it is up (a click on Allow waits for the buttons to wake). */
export async function promptUp(page: Page): Promise<Locator> {
  const modal = page.getByTestId('prompt-modal');
  await modal.waitFor();
  return modal;
}

/** Save a screenshot into docs/screenshots/. */
export async function snap(page: Page, name: string): Promise<void> {
  await mkdir(shotsDir, { recursive: true });
  await page.screenshot({
    path: path.join(shotsDir, `${name}.png`),
    animations: 'disabled',
    caret: 'hide',
  });
}

/** The service names of the latest register the simulator received. */
export function lastRegistered(sim: AdventSim): string[] {
  return Object.keys(sim.registrations().at(-1) ?? {}).sort();
}

function slug(name: string): string {
  return name
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 80);
}
