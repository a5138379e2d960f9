import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// DESIGN §2: the core never imports a UI or a host, and the contract never imports Node, because
// the renderer imports it. These rules are what keeps the core testable without Electron.
const eslint = new ESLint();

async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'no-restricted-imports')
    .map((m) => m.message);
}

describe('layering rules', () => {
  it.each([
    [
      'app/example.ts',
      "import { app } from 'electron';\nexport const x = app;\n",
      /never imports electron/,
    ],
    [
      'app/example.ts',
      "import React from 'react';\nexport const x = React;\n",
      /never imports react/,
    ],
    [
      'app/example.ts',
      "import { main } from '../main/headless/cli.js';\nexport const x = main;\n",
      /must not import hosts/,
    ],
    [
      'app/example.ts',
      "import { AdventSim } from '../sim/advent/server.js';\nexport const x = AdventSim;\n",
      /must not import the simulators/,
    ],
    [
      'app/contract/example.ts',
      "import fs from 'node:fs';\nexport const x = fs;\n",
      /no node:\* here/,
    ],
    [
      'main/headless/example.ts',
      "import { app } from 'electron';\nexport const x = app;\n",
      /Only main\/electron imports electron/,
    ],
  ])('refuses %s importing what its layer must not', async (file, code, message) => {
    expect(await problems(file, code)).toEqual([expect.stringMatching(message)]);
  });

  it('lets the core import Node and its own modules', async () => {
    expect(
      await problems(
        'app/example.ts',
        "import fs from 'node:fs';\nimport { Emitter } from './events.js';\nexport const x = [fs, Emitter];\n",
      ),
    ).toEqual([]);
  });
});
