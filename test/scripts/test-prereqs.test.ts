import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHROMIUM_PATHS, findChromium, nodeSupported } from '../../scripts/test-prereqs.js';

const script = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../scripts/test-prereqs.js',
);

describe("npm test's prerequisites", () => {
  it.each([
    ['18.20.0', false],
    ['20.18.3', false],
    ['20.19.0', true],
    ['v20.20.2', true],
    ['21.7.3', false],
    ['22.11.0', false],
    ['22.12.0', true],
    ['24.1.0', true],
  ])('Node.js %s supported: %s (the engines range)', (version, ok) => {
    expect(nodeSupported(version)).toBe(ok);
  });

  it('finds the browser where the end-to-end tests look, CHROME_PATH first', () => {
    const only = (p: string) => (candidate: string) => candidate === p;
    expect(findChromium({}, only('/usr/bin/chromium'))).toEqual({ path: '/usr/bin/chromium' });
    expect(findChromium({ CHROME_PATH: '/opt/c/chrome' }, only('/opt/c/chrome'))).toEqual({
      path: '/opt/c/chrome',
    });
    expect(findChromium({}, () => false).problem).toContain(CHROMIUM_PATHS.join(', '));
    // A CHROME_PATH set by the user is not silently passed over for another browser.
    expect(findChromium({ CHROME_PATH: '/nope' }, only('/usr/bin/chromium')).problem).toMatch(
      /CHROME_PATH is set to \/nope, which does not exist/,
    );
  });

  it('stops at once with the one thing to do when no browser can be had', () => {
    const r = spawnSync(process.execPath, [script], {
      env: { ...process.env, CHROME_PATH: '/nonexistent/chromium' },
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^npm test: CHROME_PATH is set to \/nonexistent\/chromium/);
    expect(r.stderr).toMatch(/apt-get install chromium|set CHROME_PATH/);
  });

  it('says nothing and lets the tests run when the browser is there', () => {
    const r = spawnSync(process.execPath, [script], {
      env: { ...process.env, CHROME_PATH: process.execPath },
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(r.stdout + r.stderr).toBe('');
  });
});
