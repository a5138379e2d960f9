/** axe-core in the page under test: WCAG 2 A/AA findings as "rule: targets" lines. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { repo } from './host.js';

/** `scope` is a page expression for the element to check (default: the whole document). */
export async function accessibilityViolations(page: Page, scope = 'document'): Promise<string[]> {
  // Evaluated through the debugger: the app's CSP (rightly) refuses an injected script tag.
  await page.evaluate(
    await readFile(path.join(repo, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8'),
  );
  return (await page.evaluate(
    `axe.run(${scope}, { runOnly: ['wcag2a', 'wcag2aa'] }).then((r) => r.violations.map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`,
  )) as string[];
}
