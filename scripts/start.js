#!/usr/bin/env node
// `npm start`: until the desktop window exists, start the terminal agent against the built-in
// demo server (the simulator, in this process, on a random loopback port) so a newcomer sees a
// working agent at once, with no account. Extra arguments go to `advent-agent run`.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(path.join(root, 'dist', 'main', 'headless', 'cli.js'))) {
  console.log('Building (first run)…');
  execFileSync(
    process.execPath,
    [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
}

const { AdventSim } = await import('../dist/app/sim/advent-sim.js');
const { main, processIo } = await import('../dist/main/headless/cli.js');

const sim = await AdventSim.start({ record: false });
console.log(
  `Demo server (simulated, no account needed) on 127.0.0.1:${sim.port}.\n` +
    'Try: what time is it   ·   write a note: buy milk   ·   /services   ·   /quit\n',
);
const code = await main(
  ['run', '--server', `127.0.0.1:${sim.port}`, '--token', 'demo', ...process.argv.slice(2)],
  processIo(),
);
await sim.stop();
process.exit(code);
