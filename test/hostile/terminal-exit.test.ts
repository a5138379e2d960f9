/**
 * A service manager stops `advent-agent run` with SIGTERM, a person with Ctrl-C or /quit, and in
 * all three stdin is still open (a pipe from the service manager, a terminal). The process must
 * say goodbye and then actually end, or the manager has to SIGKILL it (no goodbye to the server,
 * no audit flush). Real child processes of the installed bin, built by `npm run build`.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FrameType } from '../../app/wire/advent/frame.js';
import { AdventSim } from '../../sim/advent/server.js';
import { until } from '../helpers/wait.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(repo, 'bin', 'advent-agent.js');

/**
 * The promise is 2 s on an idle machine; this bound is generous for a loaded CI box. The failure
 * it guards against is not slowness but no exit at all (stdin held the process) or one only after
 * the 30 s end-of-input wait.
 */
const EXIT_BOUND_MS = 5_000;

let dir: string;
let sim: AdventSim;
const children = new Set<ChildProcessWithoutNullStreams>();
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-terminal-exit-'));
  sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
});
afterEach(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  children.clear();
  await sim.stop();
  await rm(dir, { recursive: true, force: true });
});

interface Running {
  child: ChildProcessWithoutNullStreams;
  output(): string;
  /** Exit code and milliseconds from `since` (set by the caller) to the process's end. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

function startRun(): Running {
  expect(existsSync(path.join(repo, 'dist', 'main', 'headless', 'cli.js'))).toBe(true);
  const child = spawn(
    process.execPath,
    [
      bin,
      'run',
      '--server',
      `127.0.0.1:${sim.port}`,
      '--token',
      'tok',
      '--data-dir',
      path.join(dir, 'data'),
      '--files',
      path.join(dir, 'files'),
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  children.add(child);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>(
    (resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  return { child, output: () => out, exited };
}

const saidGoodbye = (): boolean =>
  sim.received.some((f) => f.type === FrameType.STATUS && f.text === '##DISCONNECT');

describe('run ends with stdin still open', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s: goodbye to the server, "bye", exit 0, promptly',
    async (signal) => {
      const run = startRun();
      await until(() => run.output().includes('✓ connected to'), 'connected', 20_000);
      const sent = performance.now();
      run.child.kill(signal);
      const { code, at } = await run.exited;
      expect(code).toBe(0);
      expect(at - sent).toBeLessThan(EXIT_BOUND_MS);
      expect(run.output()).toMatch(/bye\n$/);
      expect(saidGoodbye()).toBe(true);
      // stdin was never closed by us: the process let go of it itself.
      expect(run.child.stdin.writableEnded).toBe(false);
    },
  );

  it('/quit: goodbye, "bye", exit 0, promptly', async () => {
    const run = startRun();
    await until(() => run.output().includes('✓ connected to'), 'connected', 20_000);
    const sent = performance.now();
    run.child.stdin.write('/quit\n');
    const { code, at } = await run.exited;
    expect(code).toBe(0);
    expect(at - sent).toBeLessThan(EXIT_BOUND_MS);
    expect(run.output()).toMatch(/bye\n$/);
    expect(saidGoodbye()).toBe(true);
    expect(run.child.stdin.writableEnded).toBe(false);
  });
});
