#!/usr/bin/env node
// The Advent demo server (sim/cli.ts). Runs the built code; before a build, it runs the
// TypeScript source through tsx when that is installed, so `npm run sim` works on a fresh clone.
let cli;
try {
  cli = await import('../dist/sim/cli.js');
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
  try {
    const { tsImport } = await import('tsx/esm/api');
    cli = await tsImport('../sim/cli.ts', import.meta.url);
  } catch {
    console.error('advent-sim: dist/ is missing; run `npm run build` first.');
    process.exit(1);
  }
}
process.exitCode = await cli.main(process.argv.slice(2));
