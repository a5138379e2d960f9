import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cmdQuote,
  createSpawnLauncher,
  resolveCommand,
} from '../../../app/services/mcp/launcher.js';
import { LineSplitter } from '../../../app/services/mcp/lines.js';
import { mergePath, readLoginShellPath } from '../../../app/services/mcp/login-path.js';
import { ServerLog } from '../../../app/services/mcp/server-log.js';
import { until } from '../../helpers/wait.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('starting server processes', () => {
  it('finds a command on the PATH it is given, only if it can be run', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'advent-launch-'));
    const bin = path.join(dir, 'bin');
    await import('node:fs/promises').then((fs) => fs.mkdir(bin));
    await writeFile(path.join(bin, 'uvx'), '#!/bin/sh\n');
    await chmod(path.join(bin, 'uvx'), 0o755);
    await writeFile(path.join(bin, 'notes'), 'not a program');
    const env = { PATH: ['/nonexistent', bin].join(':') };
    expect(resolveCommand('uvx', env, undefined, 'linux')).toBe(path.join(bin, 'uvx'));
    expect(resolveCommand('notes', env, undefined, 'linux')).toBeUndefined();
    expect(resolveCommand('./bin/uvx', {}, dir, 'linux')).toBe(path.join(bin, 'uvx'));
    expect(resolveCommand('uvx', { PATH: '/nonexistent' }, undefined, 'linux')).toBeUndefined();
  });

  it('says which command was not found and where it looked', async () => {
    const launcher = createSpawnLauncher();
    await expect(
      launcher.launch({
        command: 'advent-missing-7c1',
        args: [],
        env: { PATH: '/usr/local/bin:/usr/bin' },
        serverName: 'x',
      }),
    ).rejects.toThrow(
      "the command 'advent-missing-7c1' was not found; searched PATH: /usr/local/bin:/usr/bin",
    );
  });

  it('quotes arguments for cmd.exe so metacharacters stay literal (npx.cmd on Windows)', () => {
    expect(cmdQuote('C:\\Program Files\\nodejs\\npx.cmd')).toBe(
      '^"C:\\Program^ Files\\nodejs\\npx.cmd^"',
    );
    expect(cmdQuote('a&b|c')).toBe('^"a^&b^|c^"');
    expect(cmdQuote('say "hi"')).toBe('^"say^ \\^"hi\\^"^"');
  });

  it('stops a server together with the processes it started', async () => {
    const launcher = createSpawnLauncher();
    const script = [
      "const { spawn } = require('node:child_process');",
      "const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });",
      'process.stdout.write(String(child.pid) + "\\n");',
      // Ignores stdin closing and SIGTERM, like a badly behaved server.
      "process.on('SIGTERM', () => {});",
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const proc = await launcher.launch({
      command: process.execPath,
      args: ['-e', script],
      env: { PATH: process.env.PATH ?? '' },
      serverName: 'tree',
    });
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await until(() => out.includes('\n'), 'the grandchild pid', 10_000);
    const grandchild = Number(out.trim());
    expect(alive(grandchild)).toBe(true);
    await proc.kill(300);
    await until(() => !alive(grandchild) && !alive(proc.pid!), 'the whole tree to end', 5000);
    expect(await proc.exited).toMatchObject({ signal: 'SIGKILL' });
  });
});

describe('bounded reading', () => {
  it('cuts a stream into lines and never holds more than the bound of one line', () => {
    const lines: string[] = [];
    const overlong: number[] = [];
    const s = new LineSplitter(
      10,
      (l) => lines.push(l),
      (_start, bytes) => overlong.push(bytes),
    );
    s.push(Buffer.from('ab\r\ncd'));
    s.push(Buffer.from('e\n'));
    s.push(Buffer.from('0123456789abcdef'));
    s.push(Buffer.from('more\nok\n'));
    s.push(Buffer.from('tail'));
    s.end();
    expect(lines).toEqual(['ab', 'cde', 'ok', 'tail']);
    expect(overlong).toEqual([16]);
  });

  it('keeps a bounded log and masks secrets before keeping a line', () => {
    const log = new ServerLog(() => 0);
    log.setSecrets(['hunter2hunter2', 'ab']);
    log.add('stderr', 'token=hunter2hunter2 ab');
    expect(log.list()[0]!.text).toBe('token=•••• ab');
    for (let i = 0; i < 600; i++) log.add('stderr', `line ${i}`);
    const kept = log.list();
    expect(kept).toHaveLength(500);
    expect(kept[0]!.text).toBe('line 100');
    expect(kept.at(-1)!.text).toBe('line 599');
    log.add('stderr', 'y'.repeat(100_000));
    expect(log.list().at(-1)!.text.length).toBe(2000);
  });
});

describe("the login shell's PATH", () => {
  it('reads PATH from a login shell, ignoring what its startup files print', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'advent-shell-'));
    const shell = path.join(dir, 'fake-shell');
    // A "shell" whose startup prints a banner, then runs the command it was given.
    await writeFile(
      shell,
      `#!/bin/sh\necho "Welcome back!"\nPATH=/opt/homebrew/bin:/usr/bin\nexport PATH\nshift\nexec /bin/sh -c "$1"\n`,
    );
    await chmod(shell, 0o755);
    expect(await readLoginShellPath({ shell, platform: 'linux' })).toBe(
      '/opt/homebrew/bin:/usr/bin',
    );
  });

  it('gives up on a shell that does not answer in time', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'advent-shell-'));
    const shell = path.join(dir, 'stuck-shell');
    await writeFile(shell, '#!/bin/sh\nsleep 30\n');
    await chmod(shell, 0o755);
    expect(await readLoginShellPath({ shell, platform: 'linux', timeoutMs: 200 })).toBeUndefined();
    expect(await readLoginShellPath({ shell, platform: 'win32' })).toBeUndefined();
  });

  it("puts the login shell's entries first, without repeats", () => {
    expect(mergePath('/a:/b', '/b:/c')).toBe('/a:/b:/c');
    expect(mergePath(undefined, '/c')).toBe('/c');
  });
});
