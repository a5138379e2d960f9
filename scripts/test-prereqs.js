#!/usr/bin/env node
// `npm test` runs this first (pretest): what the tests need from outside npm, got where it can be
// and otherwise named in one command, before minutes of typecheck, lint and build are spent.
// - Node.js in the range package.json's engines states (Vite 8's own range).
// - A Chromium for the end-to-end tests (Playwright drives it; `npx playwright install` cannot
//   download here): CHROME_PATH, else Debian's package. As root with apt-get, Debian's chromium is
//   installed as .ci/run does; otherwise it stops at once with the command to run.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where test/e2e/host.ts looks for a browser when CHROME_PATH is not set. */
export const CHROMIUM_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
];

/** `^20.19.0 || >=22.12.0`, without a semver dependency. */
export function nodeSupported(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return (major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22;
}

/**
 * The browser the end-to-end tests will use: `{ path }`, or `{ problem }` in one sentence.
 * A CHROME_PATH that is set is the user's choice, so a wrong one is reported, not passed over.
 */
export function findChromium(env = process.env, exists = existsSync) {
  if (env.CHROME_PATH) {
    return exists(env.CHROME_PATH)
      ? { path: env.CHROME_PATH }
      : { problem: `CHROME_PATH is set to ${env.CHROME_PATH}, which does not exist` };
  }
  const found = CHROMIUM_PATHS.find((p) => exists(p));
  return found
    ? { path: found }
    : { problem: `no Chromium found (tried ${CHROMIUM_PATHS.join(', ')})` };
}

/** Whether this process may install Debian's chromium itself: root, with apt-get on PATH. */
function canInstall() {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  return spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
}

function installChromium() {
  console.log("npm test: installing Debian's chromium for the end-to-end tests (apt-get)…");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const run = (args) => spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
  return (
    run(['update', '-qq']).status === 0 && run(['install', '-y', '-qq', 'chromium']).status === 0
  );
}

function fail(message) {
  console.error(`npm test: ${message}`);
  process.exit(1);
}

function main() {
  if (!nodeSupported(process.versions.node))
    fail(
      `Node.js ${process.versions.node} is not supported; install Node.js 20.19 or newer (22.12+ on the 22 line) and run npm ci again`,
    );

  let browser = findChromium();
  if (browser.problem && !process.env.CHROME_PATH && canInstall() && installChromium())
    browser = findChromium();
  if (browser.problem) {
    const howTo =
      process.platform === 'linux'
        ? 'run: sudo apt-get install chromium (Debian; chromium-browser on Ubuntu), or set CHROME_PATH to a Chrome or Chromium binary'
        : 'set CHROME_PATH to a Chrome or Chromium binary, e.g. CHROME_PATH="/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"';
    fail(
      `${browser.problem}; the end-to-end tests need one. To fix it, ${howTo}, then npm test again.`,
    );
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
