/**
 * End-to-end: the agent's own notices reach the window in the reader's language — the toast and
 * the line in the conversation — naming the server as it is, while the terminal and the log keep
 * the English sentence.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectThroughUi, launchBrowser, openApp, startSim, text } from './harness.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 30_000);
afterAll(async () => {
  await browser?.close();
});

describe("the agent's notices", { timeout: 60_000 }, () => {
  it('a server calling faster than its pace is told in Chinese, in a toast and in the conversation', async () => {
    const sim = await startSim();
    // One call a second after the burst of 60: the 61st waits its turn.
    const { host, page, errors } = await openApp(browser, {
      args: ['--calls-per-second', '1'],
      locale: 'zh-CN',
    });
    await host.api.saveSettings({ language: 'zh-CN' });
    await connectThroughUi(page, sim, 'Kitchen speaker');
    const peer = sim.peer();
    const results = await Promise.all(
      Array.from({ length: 61 }, () => peer.call('get_current_time', {})),
    );
    expect(results.every((r) => r.success)).toBe(true);

    const toast = page.getByTestId('toast').filter({ hasText: '调用服务过快' });
    await toast.first().waitFor();
    expect(await text(toast.first())).toMatch(
      /^Kitchen speaker 调用服务过快（一次 60 个之后，每秒超过 1 个）/,
    );
    const line = page.getByTestId('chat-notice').filter({ hasText: '调用服务过快' });
    await line.first().waitFor();
    expect(await line.count()).toBe(1);
    expect(await text(line.first())).toContain('Kitchen speaker');
    expect(await text(line.first())).not.toMatch(/calling services faster/);
    expect(errors).toEqual([]);
  });
});
