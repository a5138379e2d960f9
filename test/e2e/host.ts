/**
 * The browser host and Chromium for end-to-end runs, without Vitest: the e2e harness and the
 * voice latency benchmark both start them from here.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { parseCliArgs } from '../../main/headless/args.js';
import type { CliIo } from '../../main/headless/io.js';
import { startUi } from '../../main/headless/ui.js';
import { FAST } from '../helpers/agent-harness.js';
import type { Dialect } from '../../app/wire/dialect.js';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const rendererDir = path.join(repo, 'dist', 'renderer');
/** Chromium from CHROME_PATH, Debian's package, or Playwright's cache; a clear error otherwise. */
export function findChromium(): string {
  const candidates = [
    process.env.CHROME_PATH,
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
  ].filter((c): c is string => Boolean(c));
  const found = candidates.find((c) => existsSync(c));
  if (!found) {
    throw new Error(
      `no Chromium found (tried ${candidates.join(', ')}); install Debian's chromium (apt-get install chromium) or set CHROME_PATH`,
    );
  }
  return found;
}

/** Headless Chromium as root on a closed network (TOOLING.md): no sandbox, no background traffic. */
export const BROWSER_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: findChromium(),
    headless: true,
    args: [...BROWSER_ARGS],
  });
}

export interface UiHost {
  url: string;
  dataDir: string;
  filesRoot: string;
  stop(): Promise<void>;
  api: Awaited<ReturnType<typeof startUi>>['api'];
}

/** Start `advent-agent ui` in-process with a fresh data folder. */
export async function startHost(
  extraArgs: string[] = [],
  opts: { dialects?: readonly Dialect[] } = {},
): Promise<UiHost> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'advent-e2e-'));
  const dataDir = path.join(dir, 'data');
  const filesRoot = path.join(dir, 'files');
  const parsed = parseCliArgs(['ui', '--data-dir', dataDir, '--files', filesRoot, ...extraArgs]);
  if (!parsed.ok || parsed.args.command !== 'ui')
    throw new Error(`bad ui args: ${parsed.ok ? '' : parsed.message}`);
  const io: CliIo = {
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    onSignal: () => () => {},
    dataDir: () => dataDir,
    filesRoot: () => filesRoot,
    version: '0.0.0-e2e',
    timing: FAST,
    rendererDir,
    dialects: opts.dialects,
  };
  const ui = await startUi(parsed.args, io);
  return {
    url: ui.url,
    dataDir,
    filesRoot,
    api: ui.api,
    async stop() {
      await ui.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
