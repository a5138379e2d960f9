/**
 * End-to-end: the Activity page (filters, exports as real downloads, chain verification) and the
 * language setting.
 */
import { readFile } from 'node:fs/promises';
import type { Browser, Download, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../app/contract/audit.js';
import { CSV_COLUMNS } from '../../app/audit/export.js';
import { en } from '../../renderer/i18n/en.js';
import { zhCN } from '../../renderer/i18n/zh-CN.js';
import {
  by,
  connectThroughUi,
  dismissToasts,
  goTo,
  launchBrowser,
  openApp,
  promptUp,
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

async function total(page: Page): Promise<number> {
  return Number(await page.getByTestId('audit-total').getAttribute('data-total'));
}

async function download(page: Page, testId: string): Promise<{ name: string; body: string }> {
  const [file] = await Promise.all([
    page.waitForEvent('download') as Promise<Download>,
    page.getByTestId(testId).click(),
  ]);
  const name = file.suggestedFilename();
  // "Saved <file>" lands over the header's buttons: close it before the next click.
  await page.getByTestId('toast').filter({ hasText: name }).waitFor();
  await dismissToasts(page);
  return { name, body: await readFile(await file.path(), 'utf8') };
}

describe('activity and settings', { timeout: 60_000 }, () => {
  it('activity: filters narrow the rows, CSV and JSON exports download, and the chain verifies', async () => {
    const sim = await startSim();
    const { page, errors } = await openApp(browser);
    await connectThroughUi(page, sim);
    const peer = sim.peer();
    // Three calls: two run by policy, one the user denies.
    expect(await peer.call('get_current_time', {})).toMatchObject({ success: true });
    expect(await peer.call('get_current_time', { format: 'simple' })).toMatchObject({
      success: true,
    });
    const denied = peer.call('create_file', { filename: 'nope.txt', content: 'no' });
    await (await promptUp(page)).getByTestId('prompt-deny').click();
    expect(await denied).toMatchObject({ success: false });

    await goTo(page, 'activity');
    await expect.poll(() => total(page)).toBe(3);
    await expect.poll(() => page.getByTestId('audit-row').count()).toBe(3);

    await page.getByTestId('audit-filter-service').selectOption('create_file');
    await expect.poll(() => total(page)).toBe(1);
    await expect.poll(() => page.getByTestId('audit-row').count()).toBe(1);
    const row = page.getByTestId('audit-row');
    expect(await text(row)).toContain('create_file');
    expect(await text(row)).toContain(en.decision.denied);
    // A call that never ran has no run time to show (its total was the user's deciding).
    expect(await row.locator('.col-duration [title]').getAttribute('title')).toBe(
      en.activity.notRun,
    );

    await page.getByTestId('audit-filter-service').selectOption('');
    await page.getByTestId('audit-filter-decision').selectOption('auto');
    await expect.poll(() => total(page)).toBe(2);
    await expect.poll(() => page.getByTestId('audit-row').count()).toBe(2);
    for (const r of await page.getByTestId('audit-row').all()) {
      expect(await text(r)).toContain('get_current_time');
      expect(await text(r.locator('.col-duration'))).toMatch(/^\d+ ms$/);
    }

    // An export follows the filters: only the two automatic calls.
    const filtered = await download(page, 'audit-export-json');
    expect(filtered.name).toMatch(/^advent-agent-audit-\d{8}-\d{4}\.json$/);
    const autoOnly = JSON.parse(filtered.body) as AuditRecord[];
    expect(autoOnly.map((r) => r.decision)).toEqual(['auto', 'auto']);

    await page.getByTestId('audit-filter-clear').click();
    await expect.poll(() => total(page)).toBe(3);

    const csv = await download(page, 'audit-export-csv');
    expect(csv.name).toMatch(/^advent-agent-audit-\d{8}-\d{4}\.csv$/);
    expect(csv.body.startsWith('\uFEFF')).toBe(true); // so Excel reads it as UTF-8
    const lines = csv.body.slice(1).trimEnd().split('\r\n');
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    expect(lines).toHaveLength(4);
    const deniedLine = lines.find((l) => l.includes(',create_file,'));
    expect(deniedLine).toContain(',denied,');
    expect(deniedLine).toContain('nope.txt');

    const json = await download(page, 'audit-export-json');
    const records = JSON.parse(json.body) as AuditRecord[];
    expect(Array.isArray(records)).toBe(true);
    expect(records.map((r) => r.service).sort()).toEqual([
      'create_file',
      'get_current_time',
      'get_current_time',
    ]);

    // A row opens the drawer with the whole record.
    const seq = records.find((r) => r.service === 'create_file')!.seq;
    await page.locator(by('audit-row', { seq })).click();
    const drawer = page.locator(by('audit-drawer', { seq }));
    await drawer.waitFor();
    expect(await text(drawer)).toContain('nope.txt');

    await page.getByTestId('audit-verify').click();
    const verified = page.getByTestId('audit-verify-result');
    await verified.waitFor();
    expect(await verified.getAttribute('data-ok')).toBe('true');
    expect(await text(verified)).toContain('3');
    expect(errors).toEqual([]);
  });

  it('activity: two servers both named Home are two Server choices, each listing only its own calls', async () => {
    const sim = await startSim();
    const { page, errors } = await openApp(browser);
    await connectThroughUi(page, sim, 'Home');
    await connectThroughUi(page, sim, 'Home');
    // The first server's connection makes one call, the second's two.
    expect(await sim.peer(1).call('get_current_time', {})).toMatchObject({ success: true });
    for (const params of [{}, { format: 'simple' }])
      expect(await sim.peer(2).call('get_current_time', params)).toMatchObject({ success: true });

    await goTo(page, 'activity');
    await expect.poll(() => total(page)).toBe(3);
    const filter = page.getByTestId('audit-filter-connection');
    const choices = filter.locator('option:not([value=""])');
    await expect.poll(() => choices.count()).toBe(2);
    const labels = await choices.allTextContents();
    expect(new Set(labels).size).toBe(2);
    for (const label of labels) expect(label).toMatch(/^Home \(/);
    const counts: number[] = [];
    const values = await Promise.all((await choices.all()).map((o) => o.getAttribute('value')));
    for (const value of values) {
      await filter.selectOption(value!);
      // Unfiltered 3, then 0 while the filtered page loads, then this server's own count.
      await expect
        .poll(async () => {
          const n = await total(page);
          return n > 0 && n < 3;
        })
        .toBe(true);
      const n = await total(page);
      await expect.poll(() => page.getByTestId('audit-row').count()).toBe(n);
      counts.push(n);
    }
    expect(counts.sort()).toEqual([1, 2]);
    expect(errors).toEqual([]);
  });

  it('language: choosing 简体中文 in Settings turns the app Chinese at once and after a reload', async () => {
    const { page, errors } = await openApp(browser);
    expect(await text(page.getByTestId('nav-chat'))).toBe(en.nav.chat);
    expect(await page.evaluate('document.documentElement.lang')).toBe('en');

    await goTo(page, 'settings');
    await page.getByTestId('settings-language').selectOption('zh-CN');
    await expect.poll(() => text(page.getByTestId('nav-chat'))).toBe(zhCN.nav.chat);
    expect(await page.evaluate('document.documentElement.lang')).toBe('zh-CN');
    for (const name of ['services', 'activity', 'connections', 'settings'] as const) {
      expect(await text(page.getByTestId(`nav-${name}`))).toBe(zhCN.nav[name]);
    }

    // Saved: a reload comes back in Chinese.
    await page.reload();
    await page.getByTestId('settings-language').waitFor();
    await expect.poll(() => text(page.getByTestId('nav-chat'))).toBe(zhCN.nav.chat);
    expect(await page.evaluate('document.documentElement.lang')).toBe('zh-CN');
    await goTo(page, 'chat');
    expect(await text(page.getByTestId('welcome').locator('h2'))).toBe(zhCN.welcome.title);
    expect(errors).toEqual([]);
  });
});
