import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RunError, execRunner } from '../../../app/services/platform/runner.js';
import { tempDirs } from '../helpers.js';
import { until } from '../../helpers/wait.js';

const node = process.execPath;
const dirs = tempDirs();
afterEach(() => dirs.cleanup());

/** Whether `pid` still runs (a zombie nobody has reaped yet has ended: a container's init may never). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return process.platform !== 'linux';
  }
}

async function rejection(p: Promise<unknown>): Promise<RunError> {
  const err = await p.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  if (err instanceof RunError) return err;
  throw err;
}

describe('the command runner (real child processes, no shell)', () => {
  it('passes arguments verbatim, never through a shell', async () => {
    const tricky = ['$(touch pwned)', '; rm -rf ~', '"quoted" & ^caret', 'a b'];
    const out = await execRunner.run(node, [
      '-e',
      'console.log(JSON.stringify(process.argv.slice(1)))',
      ...tricky,
    ]);
    expect(JSON.parse(out.stdout)).toEqual(tricky);
  });

  it('writes input to stdin and returns stdout', async () => {
    const out = await execRunner.run(node, ['-e', 'process.stdin.pipe(process.stdout)'], {
      input: 'héllo 你好',
    });
    expect(out.stdout).toBe('héllo 你好');
  });

  it('says a program is not installed', async () => {
    const err = await rejection(execRunner.run('advent-no-such-program', []));
    expect(err.reason).toBe('not_found');
    expect(err.message).toBe('advent-no-such-program is not installed');
  });

  it('reports a failing program with the end of its stderr', async () => {
    const err = await rejection(
      execRunner.run(node, ['-e', 'console.error("no clipboard here"); process.exit(3)']),
    );
    expect(err.reason).toBe('failed');
    expect(err.message).toMatch(/failed: no clipboard here$/);
  });

  it('stops a program that runs too long', async () => {
    const err = await rejection(
      execRunner.run(node, ['-e', 'setTimeout(() => {}, 60000)'], { timeoutMs: 200 }),
    );
    expect(err.reason).toBe('timeout');
  });

  it('stops a program that ignores SIGTERM at its deadline, with or without its output', async () => {
    const stubborn = "process.on('SIGTERM', () => {}); setTimeout(() => {}, 60000)";
    expect(
      (await rejection(execRunner.run(node, ['-e', stubborn], { timeoutMs: 300 }))).reason,
    ).toBe('timeout');
    const ignoring = execRunner.run(node, ['-e', stubborn], { timeoutMs: 300, output: 'ignore' });
    expect((await rejection(ignoring)).reason).toBe('timeout');
  });

  it.each(['capture', 'ignore'] as const)(
    'out of time, ends what the program started too, not only the program (output %s)',
    async (output) => {
      // A program that starts a helper and hangs: ended at its deadline, its helper must not run
      // on (doing whatever it was asked after the call was answered).
      const dir = await dirs.make();
      const pidFile = path.join(dir, 'helper.pid');
      const helper = `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setTimeout(() => {}, 60000)`;
      const script = `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(helper)}], { stdio: 'ignore' }); setTimeout(() => {}, 60000)`;
      const run = execRunner.run(node, ['-e', script], { timeoutMs: 1500, output });
      await until(() => existsSync(pidFile), 'the helper started');
      const pid = Number(readFileSync(pidFile, 'utf8'));
      try {
        expect((await rejection(run)).reason).toBe('timeout');
        await until(() => !alive(pid), 'the helper to be ended with the program');
      } finally {
        if (alive(pid)) process.kill(pid, 'SIGKILL');
      }
    },
  );

  it('a withdrawn call ends the program and what it started', async () => {
    const dir = await dirs.make();
    const pidFile = path.join(dir, 'helper.pid');
    const helper = `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setTimeout(() => {}, 60000)`;
    const script = `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(helper)}], { stdio: 'ignore' }); setTimeout(() => {}, 60000)`;
    const stop = new AbortController();
    const run = execRunner.run(node, ['-e', script], { timeoutMs: 60_000, signal: stop.signal });
    await until(() => existsSync(pidFile), 'the helper started');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    try {
      stop.abort();
      expect((await rejection(run)).reason).toBe('timeout');
      await until(() => !alive(pid), 'the helper to be ended with the program');
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('refuses more output than allowed', async () => {
    const err = await rejection(
      execRunner.run(node, ['-e', 'process.stdout.write("x".repeat(5000))'], { maxBytes: 1000 }),
    );
    expect(err.reason).toBe('failed');
  });

  it("with output 'ignore', returns when the program exits even if a child keeps its pipes", async () => {
    // Like xclip: the program forks a child that serves the clipboard (holding the inherited
    // stdout) until it is replaced, and exits. Waiting for the output to end would wait for it.
    const dir = await dirs.make();
    const pidFile = path.join(dir, 'child.pid');
    const gone = path.join(dir, 'child.gone');
    const child = `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
      setTimeout(() => require("fs").writeFileSync(${JSON.stringify(gone)}, "1"), 15000);`;
    const script = `
      const { spawn } = require('node:child_process');
      spawn(process.execPath, ['-e', ${JSON.stringify(child)}], { stdio: 'inherit', detached: true }).unref();
      process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`;
    try {
      await execRunner.run(node, ['-e', script], {
        input: 'copied',
        output: 'ignore',
        timeoutMs: 30_000,
      });
      await until(() => existsSync(pidFile), 'the forked child started');
      expect(existsSync(gone)).toBe(false);
    } finally {
      await until(() => existsSync(pidFile), 'the forked child started');
      process.kill(Number(readFileSync(pidFile, 'utf8')));
    }
  });

  it('launch resolves once a long-running program has started, and reports one that fails at once', async () => {
    await execRunner.launch(node, ['-e', 'setTimeout(() => {}, 2000)'], { settleMs: 200 });
    const err = await rejection(
      execRunner.launch(node, ['-e', 'process.exit(4)'], { settleMs: 2000 }),
    );
    expect(err.message).toMatch(/exit code 4/);
    const missing = await rejection(execRunner.launch('advent-no-such-opener', ['x']));
    expect(missing.reason).toBe('not_found');
  });
});
