import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type StartDeps, electronProblem, startApp } from '../../../main/headless/start.js';

/** A stand-in for the Electron process: exits, fails to spawn, or writes to stderr on demand. */
class FakeElectron extends EventEmitter {
  readonly stderr = new PassThrough();
  readonly killed: string[] = [];
  kill(signal: string): boolean {
    this.killed.push(signal);
    return true;
  }
  exit(code: number | null, signal: string | null = null): void {
    this.emit('exit', code, signal);
  }
}

let root: string;
let said: string[];
let uiRuns: string[][];
let spawned: { command: string; args: string[]; options: SpawnOptions }[];
let child: FakeElectron;
let signalHandler: ((s: NodeJS.Signals) => void) | undefined;
let electronErr: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'advent-start-'));
  await writeFile(
    path.join(root, 'package.json'),
    JSON.stringify({ main: 'dist/main/electron/main.js' }),
  );
  await mkdir(path.join(root, 'dist', 'main', 'electron'), { recursive: true });
  await writeFile(path.join(root, 'dist', 'main', 'electron', 'main.js'), '');
  await writeFile(path.join(root, 'electron-bin'), '');
  said = [];
  uiRuns = [];
  spawned = [];
  child = new FakeElectron();
  signalHandler = undefined;
  electronErr = '';
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function deps(over: Partial<StartDeps> = {}): StartDeps {
  return {
    root,
    argv: ['--data-dir', '/srv/x'],
    electronPath: () => path.join(root, 'electron-bin'),
    runUi: async (argv) => {
      uiRuns.push(argv);
      return 0;
    },
    platform: 'linux',
    env: { DISPLAY: ':0', ELECTRON_RUN_AS_NODE: '1', PATH: '/usr/bin' },
    say: (line) => said.push(line),
    stderr: Object.assign(new PassThrough(), {
      write: (c: Buffer | string) => ((electronErr += c.toString()), true),
    }) as unknown as NodeJS.WritableStream,
    spawn: (command, args, options) => {
      spawned.push({ command, args, options });
      return child as unknown as ChildProcess;
    },
    onSignal: (h) => {
      signalHandler = h;
      return () => (signalHandler = undefined);
    },
    graceMs: 50,
    ...over,
  };
}

describe('npm start: Electron or the browser', () => {
  it('without a display on Linux it says so in one line and opens the browser UI with the same arguments', async () => {
    expect(await startApp(deps({ env: {} }))).toBe(0);
    expect(said).toEqual([
      'Electron cannot start here (no display: DISPLAY and WAYLAND_DISPLAY are not set); opening the browser UI instead.',
    ]);
    expect(uiRuns).toEqual([['--data-dir', '/srv/x']]);
    expect(spawned).toEqual([]);
  });

  it('a Wayland display is a display; macOS and Windows need no variable', () => {
    const base = { root, electronPath: () => path.join(root, 'electron-bin') };
    expect(
      electronProblem({ ...base, platform: 'linux', env: { WAYLAND_DISPLAY: 'w-0' } }),
    ).toEqual({
      binary: path.join(root, 'electron-bin'),
    });
    expect(electronProblem({ ...base, platform: 'darwin', env: {} })).toHaveProperty('binary');
    expect(electronProblem({ ...base, platform: 'win32', env: {} })).toHaveProperty('binary');
  });

  it('with no Electron binary downloaded it falls back and says why', async () => {
    const code = await startApp(deps({ electronPath: () => new Error('download failed') }));
    expect(code).toBe(0);
    expect(said).toEqual([
      'Electron cannot start here (no Electron binary downloaded); opening the browser UI instead.',
    ]);
    expect(uiRuns).toHaveLength(1);
    said = [];
    await startApp(deps({ electronPath: () => path.join(root, 'not-there') }));
    expect(said[0]).toMatch(/no Electron binary downloaded/);
  });

  it('falls back when the Electron entry is not built or not named', async () => {
    await rm(path.join(root, 'dist'), { recursive: true });
    await startApp(deps());
    expect(said).toEqual([
      'Electron cannot start here (the desktop app is not built: dist/main/electron/main.js is missing); opening the browser UI instead.',
    ]);
    await writeFile(path.join(root, 'package.json'), '{}');
    expect(electronProblem(deps())).toEqual({
      why: 'package.json names no Electron entry ("main")',
    });
  });

  it('launches Electron on the app folder with the arguments, without ELECTRON_RUN_AS_NODE, and returns its exit code', async () => {
    const running = startApp(deps());
    await new Promise((r) => setTimeout(r, 80));
    expect(spawned).toHaveLength(1);
    const [s] = spawned;
    expect(s!.command).toBe(path.join(root, 'electron-bin'));
    expect(s!.args).toEqual(['.', '--data-dir', '/srv/x']);
    expect(s!.options.cwd).toBe(root);
    expect(s!.options.env).not.toHaveProperty('ELECTRON_RUN_AS_NODE');
    expect(s!.options.env).toHaveProperty('DISPLAY', ':0');
    // Running past the grace period: it started; later stderr goes straight through.
    child.stderr.write('later warning\n');
    await new Promise((r) => setTimeout(r, 10));
    signalHandler?.('SIGTERM');
    expect(child.killed).toEqual(['SIGTERM']);
    child.exit(3);
    expect(await running).toBe(3);
    expect(said).toEqual([]);
    expect(uiRuns).toEqual([]);
    expect(electronErr).toBe('later warning\n');
  });

  it('an Electron that exits with an error at once falls back, quoting its first line, and its noise stays out', async () => {
    const running = startApp(deps({ graceMs: 1000 }));
    await new Promise((r) => setTimeout(r, 10));
    child.stderr.write('error while loading shared libraries: libnss3.so\nmore noise\n');
    await new Promise((r) => setTimeout(r, 10));
    child.exit(127);
    expect(await running).toBe(0);
    expect(said).toEqual([
      'Electron cannot start here (it exited at once with code 127: error while loading shared libraries: libnss3.so); opening the browser UI instead.',
    ]);
    expect(uiRuns).toHaveLength(1);
    expect(electronErr).toBe('');
    expect(signalHandler).toBeUndefined();
  });

  it('an Electron that cannot be spawned falls back', async () => {
    const running = startApp(deps({ graceMs: 1000 }));
    await new Promise((r) => setTimeout(r, 10));
    child.emit('error', new Error('spawn EACCES'));
    expect(await running).toBe(0);
    expect(said[0]).toBe(
      'Electron cannot start here (it could not be started: spawn EACCES); opening the browser UI instead.',
    );
  });

  it('an Electron that quits at once without an error (another window already open) is not a failure', async () => {
    const running = startApp(deps({ graceMs: 1000 }));
    await new Promise((r) => setTimeout(r, 10));
    child.exit(0);
    expect(await running).toBe(0);
    expect(said).toEqual([]);
    expect(uiRuns).toEqual([]);
  });

  it('the browser host exit code is npm start exit code', async () => {
    const code = await startApp(deps({ env: {}, runUi: async () => 2 }));
    expect(code).toBe(2);
  });
});
