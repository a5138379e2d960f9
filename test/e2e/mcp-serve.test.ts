/**
 * End-to-end: the agent's services as an MCP server for other apps, with the browser host
 * running. An app that launches `advent-agent mcp` on the host's data folder is relayed into it:
 * its call raises the permission prompt in the page, runs once allowed, and is one more record of
 * the one audit chain. Settings switches the HTTP endpoint on and shows its address and token,
 * which an MCP client then uses.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { en } from '../../renderer/i18n/en.js';
import { accessibilityViolations } from './axe.js';
import {
  cleanup,
  freePort,
  goTo,
  launchBrowser,
  openApp,
  promptUp,
  repo,
  text,
} from './harness.js';

const bin = path.join(repo, 'bin', 'advent-agent.js');

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

function runCli(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

describe('MCP apps using the running agent', () => {
  it('`advent-agent mcp` relays into the browser host: the call is asked in the page, runs once allowed, and joins the one chain', async () => {
    const { host, page } = await openApp(browser);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'mcp', '--data-dir', host.dataDir],
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const client = new Client({ name: 'claude-ai', title: 'Claude Desktop', version: '1' });
    await client.connect(transport);
    cleanup(() => client.close());
    expect(stderr).toMatch(/relaying/);

    const call = client.callTool({
      name: 'create_file',
      arguments: { filename: 'from-claude.txt', content: 'hello from an MCP app' },
    });
    const modal = await promptUp(page);
    // An MCP app names itself, so it is always marked as one (it could take a profile's name).
    expect(await text(modal.getByTestId('prompt-connection'))).toBe(
      en.connections.mcpAppName.replace('{{name}}', 'Claude Desktop'),
    );
    expect(await text(modal.getByTestId('prompt-paths'))).toBe(
      path.join(host.filesRoot, 'from-claude.txt'),
    );
    await modal.getByTestId('prompt-allow-once').click();
    await modal.waitFor({ state: 'detached' });
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(await readFile(path.join(host.filesRoot, 'from-claude.txt'), 'utf8')).toBe(
      'hello from an MCP app',
    );

    // The Activity page lists the app as the connection the call came on.
    await goTo(page, 'activity');
    await page.getByTestId('audit-body').getByText('Claude Desktop').first().waitFor();

    await client.close();
    // Read by another process while the host runs: the log is shared, never locked for reading.
    const verified = await runCli(['audit', '--data-dir', host.dataDir, '--verify']);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/audit log intact: 1 record\(s\)/);
    const json = await runCli(['audit', '--data-dir', host.dataDir, '--json']);
    const records = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records).toEqual([
      expect.objectContaining({
        service: 'create_file',
        connection: 'Claude Desktop',
        connectionId: 'mcp:claude-ai',
        dialect: 'mcp',
        decision: 'allowed-once',
        outcome: 'ok',
      }),
    ]);
  });

  it('Settings switches the HTTP endpoint on, shows a token once when made, which a client uses; afterwards only a new one can be made', async () => {
    const { page } = await openApp(browser);
    await goTo(page, 'settings');
    const section = page.getByTestId('settings-mcp-http');
    expect(await section.getByTestId('mcp-http-state').getAttribute('data-status')).toBe('off');
    const port = await freePort();
    await section.getByTestId('mcp-http-port').fill(String(port));
    await section.getByTestId('mcp-http-port-apply').click();
    await section.getByRole('switch').click();
    await section.locator('[data-testid="mcp-http-state"][data-status="listening"]').waitFor();
    const url = await section.getByTestId('mcp-http-url').inputValue();
    expect(url).toBe(`http://127.0.0.1:${port}/mcp`);
    // No token yet: making the first asks nothing (no app can be using one).
    await section.getByTestId('mcp-http-token-hidden').waitFor();
    await section.getByRole('button', { name: 'Make a token' }).click();
    const field = section.getByTestId('mcp-http-token');
    await field.waitFor();
    const token = await field.inputValue();
    expect(token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(await section.getByTestId('mcp-http-token-once').textContent()).toMatch(
      /shown only this once/,
    );
    // The token takes the focus, described by the line saying it is shown once.
    expect(await page.evaluate('document.activeElement?.getAttribute("data-testid")')).toBe(
      'mcp-http-token',
    );
    expect(
      await accessibilityViolations(
        page,
        "document.querySelector('[data-testid=settings-mcp-http]')",
      ),
    ).toEqual([]);

    const client = new Client({ name: 'http-app', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    cleanup(() => client.close());
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('get_current_time');

    // Back on the page later, the token is gone for good: only "Regenerate token" remains.
    await goTo(page, 'activity');
    await goTo(page, 'settings');
    await section.getByTestId('mcp-http-token-hidden').waitFor();
    expect(await section.getByTestId('mcp-http-token').count()).toBe(0);
    expect(await page.content()).not.toContain(token);
    await section.getByRole('button', { name: 'Regenerate token' }).click();
    const dialog = page.getByRole('alertdialog');
    expect(await dialog.textContent()).toMatch(/disconnected/);
    await dialog.getByRole('button', { name: 'Regenerate token' }).click();
    const fresh = await section.getByTestId('mcp-http-token').inputValue();
    expect(fresh).not.toBe(token);
    await expect(client.listTools()).rejects.toThrow(/a valid bearer token is needed|session/);

    await section.getByRole('switch').click();
    await section.locator('[data-testid="mcp-http-state"][data-status="off"]').waitFor();
  });
});
