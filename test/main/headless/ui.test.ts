import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AdventSim } from '../../../sim/advent/server.js';
import { FrameType } from '../../../app/wire/advent/frame.js';
import { parseCliArgs } from '../../../main/headless/args.js';
import { main } from '../../../main/headless/cli.js';
import type { CliIo } from '../../../main/headless/io.js';
import { writeLaunchPage } from '../../../main/headless/launch-page.js';
import { defaultRendererDir, startUi } from '../../../main/headless/ui.js';
import { FAST } from '../../helpers/agent-harness.js';
import { until } from '../../helpers/wait.js';
import { httpGet, openPage, upgradeStatus } from './bridge-client.js';
import { Capture } from '../../helpers/capture.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const URL_LINE =
  /^Advent Agent is running at http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]{64})\n$/;

let dir: string;
let sim: AdventSim | undefined;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-ui-cli-'));
  await mkdir(path.join(dir, 'renderer'));
  await writeFile(path.join(dir, 'renderer', 'index.html'), '<!doctype html><title>UI</title>');
});
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
  await rm(dir, { recursive: true, force: true });
});

interface Started {
  io: CliIo;
  stdout: Capture;
  stderr: Capture;
  opened: string[];
  signal(): void;
}

function makeIo(opts: { openFails?: string } = {}): Started {
  const stdout = new Capture();
  const stderr = new Capture();
  const opened: string[] = [];
  let handler: (() => void) | undefined;
  const io: CliIo = {
    stdin: new PassThrough(),
    stdout,
    stderr,
    onSignal: (h) => {
      handler = h;
      return () => (handler = undefined);
    },
    dataDir: () => path.join(dir, 'data'),
    filesRoot: () => path.join(dir, 'files'),
    version: '0.0.0-test',
    timing: FAST,
    rendererDir: path.join(dir, 'renderer'),
    openUrl: async (url) => {
      opened.push(url);
      if (opts.openFails) throw new Error(opts.openFails);
    },
  };
  return { io, stdout, stderr, opened, signal: () => handler?.() };
}

function uiArgs(argv: string[]) {
  const parsed = parseCliArgs(['ui', ...argv]);
  if (!parsed.ok || parsed.args.command !== 'ui') throw new Error(`bad test args: ${argv}`);
  return parsed.args;
}

describe('advent-agent ui', () => {
  it('prints exactly one line with the address and its token, serves the page, and exits 0 on a signal', async () => {
    const s = makeIo();
    const exit = main(['ui'], s.io);
    await until(() => s.stdout.text.includes('\n'), 'the address line');
    const m = URL_LINE.exec(s.stdout.text);
    expect(m).not.toBeNull();
    const port = Number(m![1]);
    const page = await httpGet(port, `/?token=${m![2]}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>UI</title>');
    const bridge = await openPage({ port, token: m![2] });
    expect((await bridge.call('snapshot')).ok).toBe(true);

    s.signal();
    expect(await exit).toBe(0);
    expect((await bridge.closedWith()).code).toBe(1001);
    expect(s.stdout.text.split('\n')).toHaveLength(2);
    expect(s.stderr.text).toBe('');
  });

  it('startUi returns the address, token, port and api, and stop() closes it all (twice is fine)', async () => {
    const s = makeIo();
    const ui = await startUi(uiArgs(['--port', '0']), s.io);
    expect(ui.url).toBe(`http://127.0.0.1:${ui.port}/?token=${ui.token}`);
    expect(s.stdout.text).toBe(`Advent Agent is running at ${ui.url}\n`);
    expect((await ui.api.snapshot()).settings.host).toBe('browser');
    await ui.stop();
    await ui.stop();
    await expect(httpGet(ui.port, '/')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('listens on the --port asked for, and says so when it is taken (exit 2)', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const s = makeIo();
      expect(await main(['ui', '--port', String(port)], s.io)).toBe(2);
      expect(s.stderr.text).toMatch(new RegExp(`port ${port} on 127.0.0.1 is already in use`));
      expect(s.stdout.text).toBe('');
    } finally {
      await new Promise((r) => blocker.close(r));
    }
    const s = makeIo();
    const ui = await startUi(uiArgs(['--port', String(port)]), s.io);
    expect(ui.port).toBe(port);
    await ui.stop();
  });

  it('--server connects a HOST:PORT profile for this run; its token stays in memory and the profile goes at stop', async () => {
    sim = await AdventSim.start({ demo: true, disconnectCloseMs: 10 });
    const s = makeIo();
    const ui = await startUi(
      uiArgs(['--server', `127.0.0.1:${sim.port}`, '--token', 'flag-secret-token', '--lang', 'en']),
      s.io,
    );
    const id = 'cli-advent';
    await until(() => ui.api.agent.session(id)?.state.status === 'ready', 'the login');
    expect(sim.lastAuth()?.token).toBe('flag-secret-token');
    expect(sim.lastAuth()?.params.lang).toBe('en');
    const snap = await ui.api.snapshot();
    expect(snap.connections).toHaveLength(1);
    expect(snap.connections[0]).toMatchObject({
      active: true,
      profile: { name: `127.0.0.1:${sim.port}`, hasToken: true },
    });
    await ui.stop();
    expect(sim.received.some((f) => f.type === FrameType.STATUS && f.text === '##DISCONNECT')).toBe(
      true,
    );
    const data = path.join(dir, 'data');
    const secrets = path.join(data, 'secrets.json');
    if (existsSync(secrets))
      expect(await readFile(secrets, 'utf8')).not.toContain('flag-secret-token');
    const settings = JSON.parse(await readFile(path.join(data, 'settings.json'), 'utf8')) as {
      connections: unknown[];
    };
    expect(settings.connections).toEqual([]);
    expect(s.stdout.text + s.stderr.text).not.toContain('flag-secret-token');
  });

  it('--server reads --token-file and says which file it cannot read (exit 2)', async () => {
    const s = makeIo();
    expect(
      await main(['ui', '--server', '127.0.0.1:1', '--token-file', path.join(dir, 'nope')], s.io),
    ).toBe(2);
    expect(s.stderr.text).toMatch(/cannot read the token from .*nope/);
  });

  it("--open opens the printed address through a private page, keeping the token off the browser's command line", async () => {
    const s = makeIo();
    const ui = await startUi(uiArgs(['--open']), s.io);
    // What the browser is started with (other local users can read a process's arguments).
    expect(s.opened).toHaveLength(1);
    expect(s.opened[0]).not.toContain(ui.token);
    const page = fileURLToPath(s.opened[0]!);
    expect(path.dirname(page)).toBe(path.join(dir, 'data'));
    // The page sends the browser on to the printed address, and only the user can read it.
    const html = await readFile(page, 'utf8');
    expect(html).toContain(`<meta http-equiv="refresh" content="0;url=${ui.url}">`);
    if (process.platform !== 'win32') expect((await stat(page)).mode & 0o777).toBe(0o600);
    await ui.stop();
  });

  it('removes the launch page, with its token link, when ui ends on a signal or a stop', async () => {
    const page = path.join(dir, 'data', 'open-ui.html');
    const s = makeIo();
    const exit = main(['ui', '--open'], s.io);
    await until(() => s.opened.length === 1, 'the browser to be opened');
    expect(existsSync(page)).toBe(true);
    s.signal(); // Ctrl-C or SIGTERM (the io subscribes to both)
    expect(await exit).toBe(0);
    expect(existsSync(page)).toBe(false);

    const ui = await startUi(uiArgs(['--open']), makeIo().io);
    expect(existsSync(page)).toBe(true);
    await ui.stop();
    expect(existsSync(page)).toBe(false);
  });

  it('removes a launch page a killed run left behind at the next start, whose server refuses its token', async () => {
    const page = path.join(dir, 'data', 'open-ui.html');
    const first = await startUi(uiArgs(['--open']), makeIo().io);
    const left = await readFile(page, 'utf8'); // what a hard kill would have left on disk
    expect(left).toContain(first.token);
    await first.stop();

    // A start that fails after opening the data folder (its port taken) removes it too.
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    try {
      await writeFile(page, left);
      const port = (blocker.address() as { port: number }).port;
      expect(await main(['ui', '--port', String(port)], makeIo().io)).toBe(2);
      expect(existsSync(page)).toBe(false);
    } finally {
      await new Promise((r) => blocker.close(r));
    }

    // Even a run answering at the very address the page names, without --open: the page is gone
    // at once, and the token in it opens nothing.
    await writeFile(page, left);
    const next = await startUi(uiArgs(['--port', String(first.port)]), makeIo().io);
    try {
      expect(existsSync(page)).toBe(false);
      expect(next.token).not.toBe(first.token);
      expect(await upgradeStatus({ port: next.port, token: first.token })).toBe(403);
      expect(await upgradeStatus({ port: next.port, token: next.token })).toBe(101);
    } finally {
      await next.stop();
    }
  });

  it("the launch page's address has no character a shell or cmd's start would act on", async () => {
    const odd = path.join(dir, 'Tom & Jerry (x)!');
    const href = await writeLaunchPage(odd, 'http://127.0.0.1:1/?token=abc');
    expect(href).not.toMatch(/[&^|<>()!"' ]/);
    expect(fileURLToPath(href)).toBe(path.join(odd, 'open-ui.html'));
  });

  it('a browser that cannot be opened is a one-line notice, and the UI still runs', async () => {
    const s = makeIo({ openFails: 'no display: DISPLAY and WAYLAND_DISPLAY are not set' });
    const ui = await startUi(uiArgs(['--open']), s.io);
    expect(s.stderr.text).toBe(
      'advent-agent: could not open a browser (no display: DISPLAY and WAYLAND_DISPLAY are not set); open the address above yourself\n',
    );
    expect((await httpGet(ui.port, '/')).status).toBe(200);
    await ui.stop();
  });

  it("takes run's overrides: --allow and --files apply to this run", async () => {
    const s = makeIo();
    const files = path.join(dir, 'elsewhere');
    const ui = await startUi(uiArgs(['--allow', 'create_file', '--files', files]), s.io);
    const snap = await ui.api.snapshot();
    expect(snap.services.find((x) => x.name === 'create_file')?.policy).toBe('allow');
    expect(snap.settings.filesRoots).toEqual([files]);
    await ui.stop();
  });

  it.each([
    [['ui', '--port', '70000'], /--port must be a whole number from 0 to 65535/],
    [['ui', '--port', 'abc'], /--port must be a whole number/],
    [['ui', '--server', '127.0.0.1:1'], /--server needs --token or --token-file/],
    [['ui', '--token', 't'], /--token applies only with --server HOST:PORT/],
    [['ui', '--lang', 'en'], /--lang applies only with --server/],
    [['ui', '--server', 'nohost'], /--server must be HOST:PORT/],
    [['ui', '--server', 'h:1', '--token', 't', '--token-file', 'f'], /not both/],
    [['ui', '--open=yes'], /--open/],
    [['ui', 'extra'], /unexpected argument 'extra'/],
  ])('refuses bad arguments %j with exit 2', async (argv, message) => {
    const s = makeIo();
    expect(await main(argv as string[], s.io)).toBe(2);
    expect(s.stderr.text).toMatch(message as RegExp);
  });

  it('is in the help, which says the token in the address is the key to the UI', async () => {
    const s = makeIo();
    expect(await main(['--help'], s.io)).toBe(0);
    expect(s.stdout.text).toContain("advent-agent ui [--port N] [--open] [run's flags]");
    expect(s.stdout.text).toMatch(/it\s+is the key to this UI/);
  });

  it('finds the built renderer at dist/renderer of the package', () => {
    expect(defaultRendererDir()).toBe(path.join(repo, 'dist', 'renderer'));
  });

  it('runs as a real process: prints the address, serves, and exits 0 on SIGTERM', async () => {
    const bin = path.join(repo, 'bin', 'advent-agent.js');
    expect(existsSync(path.join(repo, 'dist', 'main', 'headless', 'ui.js'))).toBe(true);
    const child = spawn(process.execPath, [bin, 'ui', '--data-dir', path.join(dir, 'data')], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, XDG_DOCUMENTS_DIR: path.join(dir, 'docs') },
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    try {
      await until(() => stdout.includes('\n'), 'the address line', 10_000);
      const m = URL_LINE.exec(stdout);
      expect(m).not.toBeNull();
      const status = (await httpGet(Number(m![1]), '/')).status;
      // 200 once the renderer is built, 503 (with the build hint) before.
      expect([200, 503]).toContain(status);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  });
});
