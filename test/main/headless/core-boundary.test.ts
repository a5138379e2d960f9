import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const headless = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../main/headless',
);

// Issue 9 §4: every host goes through CoreApi, the terminal host too. Driving the Agent directly
// is how a host ends up with behaviour (events, prompts, tokens) the other hosts do not have.
it('no file of the terminal and browser hosts imports the Agent; they use CoreApi', async () => {
  const files = (await readdir(headless)).filter((f) => f.endsWith('.ts'));
  expect(files.length).toBeGreaterThan(5);
  const offenders: string[] = [];
  for (const file of files) {
    const text = await readFile(path.join(headless, file), 'utf8');
    if (/from\s+['"][./]*app\/agent(\.js)?['"]/.test(text)) offenders.push(file);
  }
  expect(offenders).toEqual([]);
});
