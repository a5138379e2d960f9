import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCliArgs } from '../../../main/headless/args.js';
import { main } from '../../../main/headless/cli.js';
import type { CliIo } from '../../../main/headless/io.js';
import { until } from '../../helpers/wait.js';
import { Capture } from '../../helpers/capture.js';

const repo = path.resolve(import.meta.dirname, '..', '..', '..');
const bin = path.join(repo, 'bin', 'advent-agent.js');
const launch = { command: '/usr/bin/node', args: ['/opt/advent/bin/advent-agent.js', 'mcp'] };

let home: string;
const dataDir = () => path.join(home, 'advent-data');
const claudeDir = () => path.join(home, '.config', 'Claude');
const claudeFile = () => path.join(claudeDir(), 'claude_desktop_config.json');
const cursorFile = () => path.join(home, '.cursor', 'mcp.json');
const vscodeFile = () => path.join(home, '.config', 'Code', 'User', 'mcp.json');

beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'advent-mcp-setup-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

interface Run {
  stdin: PassThrough & { isTTY?: boolean };
  stdout: Capture;
  stderr: Capture;
  exit: Promise<number>;
}

function start(argv: string[], opts: { tty?: boolean; mcpLaunch?: CliIo['mcpLaunch'] } = {}): Run {
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  if (opts.tty) stdin.isTTY = true;
  const stdout = new Capture();
  const stderr = new Capture();
  const io: CliIo = {
    stdin,
    stdout,
    stderr,
    onSignal: () => () => undefined,
    dataDir: dataDir,
    filesRoot: () => path.join(home, 'files'),
    version: '0.0.0-test',
    mcpClientPlatform: { platform: 'linux', home, env: {} },
    mcpLaunch: opts.mcpLaunch ?? (() => launch),
  };
  return { stdin, stdout, stderr, exit: main(argv, io) };
}

const backups = async (dir: string) =>
  (await readdir(dir)).filter((f) => f.includes('.advent-backup-'));

/** A Claude file with another server in it, laid out by hand (three-space indent, CRLF). */
const THEIRS =
  '{\r\n   "mcpServers": {\r\n      "memory": {\r\n         "command": "npx",\r\n' +
  '         "env": { "API_TOKEN": "t-secret-1" }\r\n      }\r\n   },\r\n' +
  '   "preferences": { "quickEntry": true }\r\n}\r\n';

describe('mcp-setup command line', () => {
  it.each([
    [['mcp-setup'], { command: 'mcp-setup', yes: false, dataDir: undefined }],
    [['mcp-setup', 'claude'], { command: 'mcp-setup', app: 'claude', yes: false }],
    [['mcp-setup', 'cursor', '--yes'], { command: 'mcp-setup', app: 'cursor', yes: true }],
    [
      ['mcp-setup', '-y', 'vscode', '--data-dir', '/d'],
      { command: 'mcp-setup', app: 'vscode', yes: true, dataDir: '/d' },
    ],
    [['mcp-setup', 'claude', '--help'], { command: 'help', topic: 'mcp-setup' }],
  ])('%j parses', (argv, args) => {
    expect(parseCliArgs(argv)).toEqual({ ok: true, args });
  });

  it.each([
    [['mcp-setup', 'zed'], /unknown app 'zed': mcp-setup knows claude, cursor, vscode/],
    [['mcp-setup', 'claude', 'cursor'], /unexpected argument 'cursor'/],
    [
      ['mcp-setup', '--yes'],
      /--yes goes with an app, such as: advent-agent mcp-setup claude --yes/,
    ],
    [['mcp-setup', 'claude', '--force'], /Unknown option '--force'/],
  ])('%j is refused with a sentence and exit code 2, touching nothing', async (argv, message) => {
    await mkdir(claudeDir(), { recursive: true });
    const r = start(argv);
    expect(await r.exit).toBe(2);
    expect(r.stderr.text).toMatch(message);
    expect(r.stdout.text).toBe('');
    expect(await readdir(claudeDir())).toEqual([]);
  });

  it('has its own --help and a place in the top-level help', async () => {
    const own = start(['mcp-setup', '--help']);
    expect(await own.exit).toBe(0);
    expect(own.stdout.text).toContain(
      'advent-agent mcp-setup [claude|cursor|vscode [--yes]] [--data-dir DIR]',
    );
    expect(own.stdout.text).toMatch(/--yes, -y +write the change without asking/);
    expect(own.stdout.text).not.toContain('  advent-agent run ');
    const all = start(['--help']);
    expect(await all.exit).toBe(0);
    expect(all.stdout.text).toContain('  advent-agent mcp-setup [claude|cursor|vscode');
  });
});

describe('mcp-setup on a temp home', () => {
  it('lists each app: installed or not, its file, our entry, and the exact snippet', async () => {
    await mkdir(claudeDir(), { recursive: true });
    await writeFile(
      claudeFile(),
      JSON.stringify({ mcpServers: { 'advent-agent': { command: 'old', args: [] } } }),
    );
    await mkdir(path.join(home, '.cursor'));
    const r = start(['mcp-setup']);
    expect(await r.exit).toBe(0);
    expect(r.stderr.text).toBe('');
    const out = r.stdout.text;
    const block = (name: string, next?: string) =>
      out.slice(out.indexOf(`\n${name}\n`), next ? out.indexOf(`\n${next}\n`) : undefined);
    const claude = block('Claude Desktop', 'Cursor');
    expect(claude).toContain('Installed:   yes');
    expect(claude).toContain(`Config file: ${claudeFile()}\n`);
    expect(claude).toContain('Entry:       Added with a different command');
    expect(claude).toContain('To update it: advent-agent mcp-setup claude');
    const cursor = block('Cursor', 'VS Code');
    expect(cursor).toContain(`Config file: ${cursorFile()} (not there yet)`);
    expect(cursor).toContain('Entry:       Not added yet');
    expect(cursor).toContain('To add it:   advent-agent mcp-setup cursor');
    const vscode = block('VS Code');
    expect(vscode).toContain('Installed:   no (not installed for this user)');
    expect(vscode).toContain(`Config file: ${vscodeFile()} (not there yet)`);
    expect(vscode).not.toContain('advent-agent mcp-setup vscode');
    // The snippet, indented for reading, is still the exact JSON the core would write.
    const snippet = vscode.slice(vscode.indexOf('  Snippet:\n') + 11);
    expect(JSON.parse(snippet)).toEqual({
      servers: { 'advent-agent': { type: 'stdio', ...launch } },
    });
    expect(out).not.toMatch(/could not be found/);
  });

  it('says the command is unresolved, as Settings does, when the package folder cannot be found', async () => {
    const r = start(['mcp-setup'], {
      mcpLaunch: () => {
        throw new Error('cannot find the advent-agent package folder');
      },
    });
    expect(await r.exit).toBe(0);
    expect(r.stdout.text).toMatch(/Warning: where Advent Agent is installed could not be found/);
    expect(r.stdout.text).toContain('"command": "advent-agent"');
  });

  it('names the data folder in the snippet when it is not the default, without creating or locking it', async () => {
    const r = start(['mcp-setup', '--data-dir', path.join(home, 'other')], {
      mcpLaunch: (dir) => ({ command: '/usr/bin/node', args: ['/b.js', 'mcp', '--data-dir', dir] }),
    });
    expect(await r.exit).toBe(0);
    expect(r.stdout.text).toContain(JSON.stringify(path.join(home, 'other')));
    expect(existsSync(path.join(home, 'other'))).toBe(false);
    expect(existsSync(dataDir())).toBe(false);
  });

  it('with --yes writes the entry, keeps a backup and every other byte of the file, hiding credentials in the diff', async () => {
    await mkdir(claudeDir(), { recursive: true });
    await writeFile(claudeFile(), THEIRS);
    const r = start(['mcp-setup', 'claude', '--yes']);
    expect(await r.exit).toBe(0);
    expect(r.stderr.text).toBe('');
    const out = r.stdout.text;
    expect(out).toContain(`This adds the lines marked + to ${claudeFile()}.`);
    expect(out).toMatch(/^\+ {7}"advent-agent": \{$/m);
    expect(out).toContain('"API_TOKEN": "***"');
    expect(out).not.toContain('t-secret-1');
    expect(out).not.toContain('Write this change?');

    const after = await readFile(claudeFile(), 'utf8');
    expect(JSON.parse(after)).toEqual({
      mcpServers: {
        memory: { command: 'npx', env: { API_TOKEN: 't-secret-1' } },
        'advent-agent': launch,
      },
      preferences: { quickEntry: true },
    });
    // The file's own layout is kept: CRLF, three-space indent, the other entry as it was.
    expect(after).toContain('\r\n      "memory": {\r\n         "command": "npx",\r\n');
    expect(after.replace(/\r\n/g, '')).not.toMatch(/\n/);
    const [backup] = await backups(claudeDir());
    expect(await readFile(path.join(claudeDir(), backup!), 'utf8')).toBe(THEIRS);
    expect(out).toContain(`Written: ${claudeFile()}`);
    expect(out).toContain(`The file as it was is kept as ${path.join(claudeDir(), backup!)}`);
    expect(out).toContain('Added to Claude Desktop. Restart Claude Desktop to load it.');

    // A second run finds it in place and changes nothing.
    const again = start(['mcp-setup', 'claude']);
    expect(await again.exit).toBe(0);
    expect(again.stdout.text).toContain('already has this entry; nothing needs to change');
    expect(await backups(claudeDir())).toHaveLength(1);
  });

  it('hides credentials on the added line too, where the whole file is one line', async () => {
    await mkdir(claudeDir(), { recursive: true });
    const oneLiner = '{"mcpServers":{"x":{"command":"a","env":{"TOKEN":"zz-secret"}}}}';
    await writeFile(claudeFile(), oneLiner);
    const r = start(['mcp-setup', 'claude', '--yes']);
    expect(await r.exit).toBe(0);
    expect(r.stdout.text).toMatch(/^\+ .*"TOKEN":"\*\*\*".*"advent-agent"/m);
    expect(r.stdout.text).not.toContain('zz-secret');
    expect(await readFile(claudeFile(), 'utf8')).toContain('"TOKEN":"zz-secret"');
  });

  it('creates the file of an installed app that has none, and says so', async () => {
    await mkdir(path.join(home, '.cursor'));
    const r = start(['mcp-setup', 'cursor', '--yes']);
    expect(await r.exit).toBe(0);
    expect(r.stdout.text).toContain(`This creates ${cursorFile()} with the content below.`);
    expect(r.stdout.text).toContain(`Created: ${cursorFile()}`);
    expect(r.stdout.text).not.toContain('kept as');
    expect(JSON.parse(await readFile(cursorFile(), 'utf8'))).toEqual({
      mcpServers: { 'advent-agent': launch },
    });
  });

  it('without a terminal and without --yes shows the change, writes nothing and says how to confirm', async () => {
    await mkdir(claudeDir(), { recursive: true });
    await writeFile(claudeFile(), THEIRS);
    const r = start(['mcp-setup', 'claude']);
    expect(await r.exit).toBe(1);
    expect(r.stdout.text).toMatch(/^\+ {7}"advent-agent": \{$/m);
    expect(r.stderr.text).toContain(
      'nothing was written: stdin is not a terminal, so nobody can confirm the change. ' +
        'To write it, run: advent-agent mcp-setup claude --yes',
    );
    expect(await readFile(claudeFile(), 'utf8')).toBe(THEIRS);
    expect(await backups(claudeDir())).toEqual([]);
  });

  it('on a terminal asks, and writes only on y', async () => {
    await mkdir(claudeDir(), { recursive: true });
    await writeFile(claudeFile(), THEIRS);
    const no = start(['mcp-setup', 'claude'], { tty: true });
    await asked(no);
    no.stdin.write('\n');
    expect(await no.exit).toBe(1);
    expect(no.stdout.text).toContain('Nothing was written.');
    expect(await readFile(claudeFile(), 'utf8')).toBe(THEIRS);

    const ended = start(['mcp-setup', 'claude'], { tty: true });
    await asked(ended);
    ended.stdin.end();
    expect(await ended.exit).toBe(1);
    expect(await readFile(claudeFile(), 'utf8')).toBe(THEIRS);

    const yes = start(['mcp-setup', 'claude'], { tty: true });
    await asked(yes);
    yes.stdin.write('y\n');
    expect(await yes.exit).toBe(0);
    expect(JSON.parse(await readFile(claudeFile(), 'utf8')).mcpServers['advent-agent']).toEqual(
      launch,
    );
  });

  it('refuses to write when the file changed while the question waited', async () => {
    await mkdir(claudeDir(), { recursive: true });
    await writeFile(claudeFile(), THEIRS);
    const r = start(['mcp-setup', 'claude'], { tty: true });
    await asked(r);
    const edited = THEIRS.replace('true', 'false');
    await writeFile(claudeFile(), edited);
    r.stdin.write('y\n');
    expect(await r.exit).toBe(1);
    expect(r.stderr.text).toContain(
      `${claudeFile()} changed after the preview; nothing was written, look at the change again`,
    );
    expect(await readFile(claudeFile(), 'utf8')).toBe(edited);
    expect(await backups(claudeDir())).toEqual([]);
  });

  it('refuses a file that is not valid JSON with a sentence, a non-zero exit, and the file untouched', async () => {
    await mkdir(claudeDir(), { recursive: true });
    const broken = '{ "mcpServers": { "memory": { "command": "npx" } }, // mine\n}\n';
    await writeFile(claudeFile(), broken);
    const r = start(['mcp-setup', 'claude', '--yes']);
    expect(await r.exit).toBe(1);
    expect(r.stderr.text).toMatch(
      new RegExp(
        `^advent-agent mcp-setup: ${escape(claudeFile())} was left as it is: it is not valid JSON`,
      ),
    );
    expect(r.stdout.text).toBe('');
    expect(await readFile(claudeFile(), 'utf8')).toBe(broken);
    expect(await backups(claudeDir())).toEqual([]);
  });

  it('refuses an app that is not installed, pointing to the snippet instead', async () => {
    const r = start(['mcp-setup', 'vscode', '--yes']);
    expect(await r.exit).toBe(1);
    expect(r.stderr.text).toContain(
      `VS Code is not installed for this user (no ${path.join(home, '.config', 'Code')}); copy the snippet instead`,
    );
    expect(r.stderr.text).toContain('\n`advent-agent mcp-setup` shows the snippet to copy.\n');
    expect(r.stderr.text).not.toMatch(/\\x0A/);
    expect(existsSync(path.join(home, '.config'))).toBe(false);
  });
});

describe('mcp-setup as a process', () => {
  it('the real bin sets up Cursor in a temp HOME and XDG folder, and nowhere else', async () => {
    if (!existsSync(path.join(repo, 'dist', 'main', 'headless', 'cli.js')))
      throw new Error('run `npm run build` first: dist/main/headless/cli.js not found');
    await mkdir(path.join(home, '.cursor'));
    const xdg = path.join(home, 'xdg');
    await mkdir(path.join(xdg, 'Claude'), { recursive: true });
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: home,
      XDG_CONFIG_HOME: xdg,
      APPDATA: path.join(home, 'AppData'),
    };

    const list = await runBin(['mcp-setup'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(
      `Config file: ${path.join(xdg, 'Claude', 'claude_desktop_config.json')}`,
    );
    expect(list.stdout).toContain(`Config file: ${cursorFile()} (not there yet)`);

    const done = await runBin(['mcp-setup', 'cursor', '--yes', '--data-dir', dataDir()], env);
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    // The command an app starts is this Node and this package's bin, with the data folder named.
    expect(JSON.parse(await readFile(cursorFile(), 'utf8'))).toEqual({
      mcpServers: {
        'advent-agent': {
          command: process.execPath,
          args: [bin, 'mcp', '--data-dir', dataDir()],
        },
      },
    });
    const refused = await runBin(['mcp-setup', 'vscode'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/VS Code is not installed for this user/);
    expect(existsSync(dataDir())).toBe(false);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const asked = (r: Run): Promise<void> =>
  until(() => r.stdout.text.endsWith('Write this change? [y/N] '), 'the question');

function runBin(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}
