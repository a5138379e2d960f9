/**
 * Accessibility and 简体中文, end to end: axe-core over every page in both themes and both
 * languages, the open permission prompt (with its menu open) included, failing on any serious or
 * critical violation; and, in zh-CN, no untranslated Latin text outside an allow-list (names of
 * services and files, URLs, numbers, brand names). One browser, one page, 16 page states.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  by,
  dismissToasts,
  goTo,
  launchBrowser,
  openApp,
  promptUp,
  repo,
  type UiHost,
} from './harness.js';

let browser: Browser;
let axeSource: string;
beforeAll(async () => {
  browser = await launchBrowser();
  axeSource = await readFile(path.join(repo, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

type Lang = 'en' | 'zh-CN';
type Theme = 'light' | 'dark';

interface Finding {
  state: string;
  rule: string;
  impact: string;
  help: string;
  targets: string[];
}

/** Serious and critical axe violations on the page as it is now. */
async function axe(page: Page, state: string): Promise<Finding[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(axeSource);
  const violations = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({
       rule: v.id, impact: v.impact, help: v.help,
       targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ') + ' :: ' + n.failureSummary.replace(/\\s+/g, ' ').slice(0, 160)),
     })))`,
  )) as Omit<Finding, 'state'>[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ state, ...v }));
}

/**
 * Words that may stay Latin in Chinese: brand and protocol names, units, keys, and the shapes of
 * data (file names, paths, URLs, service ids, time zones, numbers).
 */
const ALLOWED = [
  /https?:\/\/\S+|wss?:\/\/\S+/g,
  /\?token=…?/g,
  /[\w.-]*[/\\][\w./\\~ -]*/g, // paths, time zones
  /\b[\w-]+\.(txt|json|csv|md|png|js|ts|log)\b/gi, // file names
  /\b[a-z][a-z0-9]*(_[a-z0-9]+)+\b/g, // service and parameter ids
  /\b(Advent Agent|https?|Advent|XiaoZhi|Claude Desktop|Cursor|VS Code|MCP|HTTP|JSON|CSV|UTF-8|UTC|ISO|IANA|AI|ID|URL|UUID|MAC|Opus|PCM|VAD|SHA-256|WebSocket|JSON-RPC|Authorization|Bearer|Esc|Enter|Shift|Space|Tab|Ctrl|Alt|Command|CommandOrControl|Super|F\d{1,2}|B|KB|MB|GB|TB|ms|secrets\.json)\b/g,
  /\b[0-9a-f]{12,}\b/g, // hashes
  /\d+(\.\d+)?\s?(ms|s|B|KB|MB|GB)\b/g, // numbers with units
];

/**
 * Every visible text and label in the page, skipping data: what people and servers wrote,
 * identifiers and machine values. (A string: the test's own types have no DOM.)
 */
const COLLECT_TEXT = `(() => {
  const data =
    'code, pre, kbd, samp, script, style, [translate="no"], [lang="en"], ' +
    '[data-testid="chat-user"] .bubble-text, [data-testid="chat-assistant"] .bubble-text, ' +
    '.brand-name, .connection-addr code';
  const out = [];
  const seen = (el) => !!el && !el.closest(data) && el.checkVisibility() !== false;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent && n.textContent.trim();
    if (text && seen(n.parentElement)) out.push(text);
  }
  for (const el of document.querySelectorAll('[aria-label], [title], [placeholder]')) {
    if (!seen(el)) continue;
    for (const a of ['aria-label', 'title', 'placeholder']) {
      const v = el.getAttribute(a);
      if (v) out.push(v);
    }
  }
  return out;
})()`;

/** Visible text and labels in the page that still read as English. */
async function untranslated(page: Page): Promise<string[]> {
  const texts = (await page.evaluate(COLLECT_TEXT)) as string[];
  const bad = new Set<string>();
  for (const text of texts) {
    let rest = text;
    for (const re of ALLOWED) rest = rest.replace(re, ' ');
    if (/[A-Za-z]{2,}/.test(rest)) bad.add(text.slice(0, 120));
  }
  return [...bad];
}

async function setAppearance(host: UiHost, page: Page, language: Lang, theme: Theme) {
  await host.api.saveSettings({ language, theme });
  // Polled from here: the page's CSP forbids evaluating strings inside it.
  await expect
    .poll(() =>
      page.evaluate("document.documentElement.lang + ' ' + document.documentElement.dataset.theme"),
    )
    .toBe(`${language} ${theme}`);
  // Two frames: colour transitions (cut to a hundredth of a millisecond) have ended.
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
}

async function showPage(
  page: Page,
  name: 'chat' | 'services' | 'activity' | 'connections' | 'settings',
) {
  await goTo(page, name);
  if (name === 'services') {
    // One row open: its model-facing text, registrations and Try it with a refusal in it.
    const row = page.getByTestId('service-create_file');
    const more = row.getByTestId('service-try-create_file');
    if ((await more.getAttribute('open')) === null) {
      await more.locator('summary').first().click();
      await row.getByTestId('field-create_file-filename').fill('../outside.txt');
      await row.getByTestId('field-create_file-content').fill('x');
      await row.getByTestId('service-run-create_file').click();
      await row.locator('.run-error').waitFor();
    }
  }
  if (name === 'activity') {
    await page.getByTestId('audit-row').first().waitFor();
    if ((await page.getByTestId('audit-drawer').count()) === 0)
      await page.getByTestId('audit-row').first().click();
    await page.getByTestId('audit-drawer').waitFor();
  }
  if (name === 'chat') await page.locator(by('connection-banner', { state: 'ready' })).waitFor();
  await dismissToasts(page);
}

/** A prompt raised by the demo, with its More menu open; denied afterwards. */
async function withPrompt(page: Page, host: UiHost, check: () => Promise<void>) {
  await goTo(page, 'chat');
  await host.api.sendText('write a note: checking the prompt');
  const modal = await promptUp(page);
  await page.locator('[data-testid="prompt-more"]:enabled').click();
  await modal.getByRole('menu').waitFor();
  await check();
  await page.keyboard.press('Escape'); // the menu
  await modal.getByTestId('prompt-deny').click();
  await modal.waitFor({ state: 'detached' });
}

describe('accessibility and translation', { timeout: 240_000 }, () => {
  it('axe finds no serious or critical violation on any page, theme, language or the open prompt; zh-CN leaves no English behind', async () => {
    const { page, host, errors } = await openApp(browser, { args: ['--prompt-timeout', '600'] });
    // Colours are judged as they settle, not halfway through a panel's fade-in.
    await page.emulateMedia({ reducedMotion: 'reduce' });
    const findings: Finding[] = [];
    const english: string[] = [];
    const check = async (state: string, lang: Lang) => {
      // Judged again once more after a pause when the first look finds something: on a loaded
      // machine a look has caught a button still in the previous theme's text colour (CI, once,
      // "welcome zh-CN dark"). A real violation is there at the second look too.
      let found = await axe(page, state);
      if (found.length > 0) {
        await page.waitForTimeout(500);
        found = await axe(page, state);
      }
      findings.push(...found);
      if (lang === 'zh-CN')
        for (const t of await untranslated(page)) english.push(`${state}: ${t}`);
    };

    // First run: the welcome panel.
    for (const [lang, theme] of [
      ['en', 'light'],
      ['zh-CN', 'dark'],
    ] as const) {
      await setAppearance(host, page, lang, theme);
      await page.getByTestId('welcome').waitFor();
      await check(`welcome ${lang} ${theme}`, lang);
    }

    // A conversation with a call allowed, one refused by the user, and some user runs.
    await host.api.startDemo();
    await page.locator(by('connection-banner', { state: 'ready' })).waitFor();
    await host.api.sendText('what time is it');
    await page.locator(by('tool-card', { service: 'get_current_time', state: 'done' })).waitFor();
    await host.api.sendText('write a note: buy milk');
    await (await promptUp(page)).getByTestId('prompt-deny').click();
    await page.locator(by('tool-card', { service: 'create_file', state: 'done' })).waitFor();
    for (let i = 0; i < 3; i++) await host.api.runService('get_current_time', {});

    const pages = ['chat', 'services', 'activity', 'connections', 'settings'] as const;
    // Every page in both languages and both themes; the prompt in all four.
    for (const [lang, theme] of [
      ['en', 'light'],
      ['zh-CN', 'dark'],
    ] as const) {
      await setAppearance(host, page, lang, theme);
      for (const name of pages) {
        await showPage(page, name);
        await check(`${name} ${lang} ${theme}`, lang);
      }
    }
    for (const [lang, theme] of [
      ['en', 'light'],
      ['en', 'dark'],
      ['zh-CN', 'light'],
      ['zh-CN', 'dark'],
    ] as const) {
      await setAppearance(host, page, lang, theme);
      await withPrompt(page, host, () => check(`prompt ${lang} ${theme}`, lang));
    }

    const report = findings
      .map((f) => `${f.state} — ${f.impact} ${f.rule}: ${f.help}\n    ${f.targets.join('\n    ')}`)
      .join('\n');
    expect(report).toBe('');
    expect(english.join('\n')).toBe('');
    expect(errors).toEqual([]);
  });
});
