/**
 * End to end: Settings → "Use these services in other apps" shows Claude Desktop's snippet with
 * the command that launches this agent; "Add to Claude Desktop" shows the change in a dialog
 * (Esc leaves the file alone), Confirm writes it beside a backup, and the file then holds the
 * user's own server and ours. axe finds nothing serious in the section or the dialog, light or dark.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreApi } from '../../app/api.js';
import { MemorySecretStore } from '../../app/settings/secrets.js';
import { startUiServer } from '../../main/headless/ui-server.js';
import { en } from '../../renderer/i18n/en.js';
import { FAST } from '../helpers/agent-harness.js';
import { cleanup, goTo, launchBrowser, openPage, rendererDir, repo, text } from './harness.js';

let browser: Browser;
let axeSource: string;
beforeAll(async () => {
  browser = await launchBrowser();
  axeSource = await readFile(path.join(repo, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

/** Serious and critical axe findings on the page as it is now. */
async function axe(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(axeSource);
  return (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations
       .filter((v) => v.impact === 'serious' || v.impact === 'critical')
       .map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`,
  )) as string[];
}

/** The browser host over a core whose "other apps" live in a temp home folder. */
async function startApp(home: string, dir: string) {
  const api = await CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    timing: FAST,
    version: '0.0.0-e2e',
    host: 'browser',
    mcpLaunch: {
      command: process.execPath,
      args: [path.join(repo, 'bin', 'advent-agent.js'), 'mcp'],
    },
    mcpClientPlatform: { platform: 'linux', home, env: {} },
  });
  cleanup(() => api.close());
  const server = await startUiServer({ api, port: 0, staticDir: rendererDir, log: () => {} });
  cleanup(() => server.close());
  const { page, errors } = await openPage(browser, server.url);
  cleanup(() => page.context().close());
  await page.getByTestId('nav-chat').waitFor();
  return { api, page, errors };
}

describe('this agent in other apps', { timeout: 90_000 }, () => {
  it('Settings shows the Claude snippet, Add shows the diff, Confirm writes both entries and a backup', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'advent-e2e-clients-'));
    cleanup(() => rm(dir, { recursive: true, force: true }));
    const home = path.join(dir, 'home');
    const claudeDir = path.join(home, '.config', 'Claude');
    const file = path.join(claudeDir, 'claude_desktop_config.json');
    await mkdir(claudeDir, { recursive: true });
    const before = `{
  "mcpServers": {
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"],
      "env": { "MEMORY_API_KEY": "sk-e2e-not-for-screens" }
    }
  }
}
`;
    await writeFile(file, before);
    const { api, page, errors } = await startApp(home, dir);

    await goTo(page, 'settings');
    const row = page.getByTestId('mcp-client-claude');
    await row.waitFor();
    expect(await text(page.getByTestId('mcp-clients').locator('h2'))).toBe(en.mcpClients.title);
    const snippet = JSON.parse(await text(row.getByTestId('mcp-client-snippet-claude'))) as {
      mcpServers: Record<string, { command: string; args: string[] }>;
    };
    expect(snippet.mcpServers['advent-agent']).toEqual({
      command: process.execPath,
      args: [path.join(repo, 'bin', 'advent-agent.js'), 'mcp'],
    });
    expect(await text(row.getByTestId('mcp-client-path-claude'))).toBe(file);
    expect(await text(row.getByTestId('mcp-client-state-claude'))).toBe(en.mcpClients.state.absent);
    // The command was resolved, so no warning about it; Cursor is not installed here.
    expect(await page.getByTestId('mcp-clients-unresolved').count()).toBe(0);
    expect(await page.getByTestId('mcp-client-add-cursor').isDisabled()).toBe(true);

    // Add → the change in a dialog, focus inside it; Esc closes it and the file is untouched.
    const add = row.getByTestId('mcp-client-add-claude');
    expect(await text(add)).toBe('Add to Claude Desktop');
    await add.click();
    const dialog = page.getByRole('dialog', { name: 'Add to Claude Desktop' });
    await dialog.waitFor();
    const added = await dialog.locator('[data-op="add"]').allTextContents();
    expect(added.join('\n')).toContain('+     "advent-agent": {');
    expect(added.join('\n')).toContain(JSON.stringify(process.execPath));
    expect(await dialog.locator('[data-op="del"]').count()).toBe(0);
    // Another server's key, shown around the change, is masked on screen and the dialog says so.
    expect(await text(dialog)).not.toContain('sk-e2e-not-for-screens');
    expect(await text(dialog.locator('pre'))).toContain('"MEMORY_API_KEY": "***"');
    expect(await text(dialog.getByTestId('mcp-client-masked'))).toBe(en.mcpClients.masked);
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Tab');
      expect(
        await page.evaluate(
          '!!document.activeElement?.closest(\'[data-testid="mcp-client-review"]\')',
        ),
      ).toBe(true);
    }
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await readFile(file, 'utf8')).toBe(before);

    // Open again; the section and the dialog pass axe in both themes.
    await add.click();
    await dialog.waitFor();
    await page.emulateMedia({ reducedMotion: 'reduce' });
    for (const theme of ['light', 'dark'] as const) {
      await api.saveSettings({ theme });
      await expect.poll(() => page.evaluate('document.documentElement.dataset.theme')).toBe(theme);
      await page.evaluate(
        'new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))',
      );
      // Polled: on a loaded machine the theme's colours may land a frame after the two above; a
      // real contrast problem stays and fails.
      await expect.poll(() => axe(page), { timeout: 10_000 }).toEqual([]);
    }

    await dialog.getByTestId('mcp-client-confirm').click();
    await dialog.waitFor({ state: 'detached' });
    const done = row.getByTestId('mcp-client-done-claude');
    expect(await text(done.locator('p').first())).toBe(
      'Added to Claude Desktop. Restart Claude Desktop to load it.',
    );
    const backupPath = await text(row.getByTestId('mcp-client-backup-claude'));
    expect(path.dirname(backupPath)).toBe(claudeDir);
    expect(await readFile(backupPath, 'utf8')).toBe(before);

    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      mcpServers: {
        // The key shown as *** is written as it was.
        memory: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-memory'],
          env: { MEMORY_API_KEY: 'sk-e2e-not-for-screens' },
        },
        'advent-agent': {
          command: process.execPath,
          args: [path.join(repo, 'bin', 'advent-agent.js'), 'mcp'],
        },
      },
    });
    expect((await readdir(claudeDir)).sort()).toEqual(
      [path.basename(backupPath), 'claude_desktop_config.json'].sort(),
    );
    // The row now says so, and there is nothing left to add.
    await page.locator('[data-testid="mcp-client-claude"][data-entry="current"]').waitFor();
    expect(await text(row.getByTestId('mcp-client-state-claude'))).toBe(
      en.mcpClients.state.current,
    );
    expect(await add.isDisabled()).toBe(true);
    expect(errors).toEqual([]);
  });
});
