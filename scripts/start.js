#!/usr/bin/env node
// `npm start`: build on first run, then the desktop window (Electron) where it can run; where it
// cannot (no binary downloaded, no display, not built, dies at once) one line says why and the
// same UI opens in the browser (`advent-agent ui --open`). Extra arguments are passed through.
// The decisions live in dist/main/headless/start.js (tested); this file only builds and wires.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'main', 'headless', 'cli.js');
const page = path.join(root, 'dist', 'renderer', 'index.html');

if (!existsSync(cli) || !existsSync(page)) {
  console.log('Building (first run)…');
  // Under npm, npm_execpath is npm's own script: no shell and no PATH lookup needed.
  const npm = process.env.npm_execpath;
  const build = npm
    ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build'], {
        cwd: root,
        stdio: 'inherit',
        shell: process.platform === 'win32',
      });
  if (build.status !== 0) {
    if (!existsSync(cli)) {
      console.error('npm start: the build failed (see above); fix it and run npm start again.');
      process.exit(1);
    }
    console.error('npm start: the build did not finish (see above); starting with what was built.');
  }
}

/**
 * The Electron binary, as `require('electron')` gives it. Asked in a child process: when the
 * binary was never fetched, that require tries to download it and prints progress and stack
 * traces, which must not reach the terminal here.
 */
function electronPath() {
  const probe = spawnSync(
    process.execPath,
    ['-e', 'process.stdout.write("\\n" + require("electron"))'],
    { cwd: root, encoding: 'utf8', timeout: 5 * 60_000, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (probe.status !== 0) return new Error('no Electron binary downloaded');
  return probe.stdout.trim().split('\n').pop() ?? new Error('no Electron binary downloaded');
}

const { startApp } = await import('../dist/main/headless/start.js');
const { main, processIo } = await import('../dist/main/headless/cli.js');

const code = await startApp({
  root,
  argv: process.argv.slice(2),
  electronPath,
  runUi: (argv) => main(['ui', '--open', ...argv], processIo()),
});
process.exit(code);
