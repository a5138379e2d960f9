/**
 * End-to-end: an MCP server added by pasting JSON on the MCP servers page becomes tools the
 * (simulated) voice server is offered; its call raises the permission prompt with the server's
 * claim about the tool, and runs once allowed.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { en } from '../../renderer/i18n/en.js';
import { FIXTURE } from '../services/mcp/helpers.js';
import {
  by,
  connectThroughUi,
  dismissToasts,
  lastRegistered,
  launchBrowser,
  openApp,
  promptUp,
  snap,
  startSim,
  text,
} from './harness.js';

const require = createRequire(import.meta.url);

/** axe-core's serious and critical findings on the page as it is now. */
async function axeProblems(page: Page): Promise<string[]> {
  // Evaluated over the DevTools protocol: the page's CSP (rightly) refuses inline scripts.
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const found = await page.evaluate(async () => {
    // Runs in the page: its globals are reached through globalThis (this file is Node-typed).
    const page = globalThis as unknown as {
      document: unknown;
      axe: {
        run(
          context: unknown,
          options: unknown,
        ): Promise<{
          violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
        }>;
      };
    };
    const r = await page.axe.run(page.document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      where: v.nodes.map((n) => n.target.join(' ')),
    }));
  });
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.where.join(', ')}`);
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

describe('MCP servers page', { timeout: 90_000 }, () => {
  it('paste JSON → its tools are offered → a server call is asked with the claim and allowed', async () => {
    const sim = await startSim();
    const { page, errors, host } = await openApp(browser);
    await connectThroughUi(page, sim);

    await page.getByTestId('nav-mcp').click();
    await page.locator('[data-testid="nav-mcp"][aria-current="page"]').waitFor();
    await page.getByTestId('mcp-empty').waitFor();
    await page.getByTestId('mcp-paste').click();
    // A snippet can claim trust; it is not imported (trust is given here, on the server's row).
    const json = JSON.stringify({
      mcpServers: {
        fixture: {
          command: process.execPath,
          args: [FIXTURE],
          env: { API_KEY: 'k-123456' },
          trusted: true,
        },
      },
    });
    await page.getByTestId('mcp-import-json').fill(json);
    await page.getByTestId('mcp-import-read').click();
    const candidate = page.getByTestId('mcp-candidate-fixture');
    await candidate.waitFor();
    // The preview says what will become a secret; nothing runs before the confirmation.
    expect(await text(candidate)).toContain('API_KEY');
    expect(await text(candidate)).toContain('"trusted" is not imported');
    expect(await text(page.getByTestId('mcp-import-untrusted'))).toBe(en.mcp.import.untrusted);
    expect(await host.api.listMcpServers()).toEqual([]);
    await page.getByTestId('mcp-import-confirm').click();
    await page.getByTestId('mcp-import').waitFor({ state: 'detached' });
    await dismissToasts(page);

    const card = page.locator(by('mcp-server-fixture', { state: 'ready' }));
    await card.waitFor({ timeout: 30_000 });
    expect(await text(page.getByTestId('mcp-state-fixture'))).toBe(
      en.mcp.state.ready_other.replace('{{count}}', '10'),
    );
    await card.getByTestId(/^mcp-tool-mcp-[0-9a-f]+-echo$/).waitFor();
    // The page with a server and its tools is usable with a keyboard and a screen reader.
    await page.getByTestId('mcp-log-toggle-fixture').click();
    await page.getByTestId(/^mcp-log-mcp-/).waitFor();
    expect(await axeProblems(page)).toEqual([]);
    await snap(page, 'mcp-servers');
    await expect.poll(() => lastRegistered(sim), { timeout: 15_000 }).toContain('fixture_echo');

    const call = sim.peer().call('fixture_echo', { text: 'hello from the server' });
    const modal = await promptUp(page);
    expect(await modal.getAttribute('data-service')).toBe('fixture_echo');
    expect(await text(modal.getByTestId('prompt-summary'))).toBe(
      'Run "Echo" of the MCP server "fixture"',
    );
    // A claim, not a fact: the server is not trusted.
    expect(await text(modal.getByTestId('prompt-mcp-claims'))).toBe(
      'The server says it only reads.',
    );
    expect(await text(modal.getByTestId('prompt-mcp-hint'))).toContain(en.mcp.hint.unverified);
    await snap(page, 'mcp-prompt');
    await modal.getByTestId('prompt-allow-once').click();
    expect(await call).toMatchObject({ success: true, data: 'hello from the server' });

    const audit = await host.api.queryAudit({ service: 'fixture_echo' });
    expect(audit.records[0]).toMatchObject({ decision: 'allowed-once', outcome: 'ok' });
    expect(errors).toEqual([]);
  });
});
