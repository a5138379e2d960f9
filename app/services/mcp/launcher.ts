/**
 * How a stdio MCP server's process is started, behind one interface so each host can choose: the
 * terminal and browser hosts spawn, while the packaged desktop app must not spawn its own
 * executable (the fuses turn `runAsNode` off, so it would start a second Advent Agent) and forks
 * bundled JavaScript servers as Electron utility processes instead (main/electron/mcp-launcher.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';

export interface McpLaunchSpec {
  command: string;
  args: string[];
  /** The whole environment of the child (nothing else is inherited). */
  env: Record<string, string>;
  cwd?: string;
  /** The server's name, for messages and process names. */
  serverName: string;
}

export interface McpExit {
  code: number | null;
  signal: string | null;
}

/** A started server process: its three streams and a way to stop it with its children. */
export interface McpProcess {
  readonly pid: number | undefined;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable | null;
  /** Settles once, when the process has exited. */
  readonly exited: Promise<McpExit>;
  /** End it and every process it started: stdin closed, then SIGTERM, then SIGKILL. */
  kill(graceMs?: number): Promise<void>;
}

export interface McpLauncher {
  /** Rejects with a message naming what is wrong (command not found, not executable…). */
  launch(spec: McpLaunchSpec): Promise<McpProcess>;
}

/** A launch failure worded for the server's row. */
export class McpLaunchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpLaunchError';
  }
}

export interface SpawnLauncherOptions {
  platform?: NodeJS.Platform;
}

/**
 * Find `command` the way a shell would: a path is taken as it is (relative to `cwd`), a bare name
 * is looked up in the env's PATH (and, on Windows, with each PATHEXT ending, so `npx` finds
 * `npx.cmd`). Undefined when there is no such executable.
 */
export function resolveCommand(
  command: string,
  env: Record<string, string>,
  cwd: string | undefined,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const exts =
    platform === 'win32'
      ? ['', ...(pathVar(env, 'PATHEXT') ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean)]
      : [''];
  const candidates = (file: string): string[] =>
    exts.map((ext) => (ext && file.toLowerCase().endsWith(ext.toLowerCase()) ? file : file + ext));
  const isFile = (file: string): boolean => {
    try {
      if (!statSync(file).isFile()) return false;
      if (platform !== 'win32') accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes('/') || (platform === 'win32' && command.includes('\\'))) {
    const full = p.resolve(cwd ?? process.cwd(), command);
    return candidates(full).find(isFile);
  }
  const dirs = (pathVar(env, 'PATH') ?? '').split(platform === 'win32' ? ';' : ':');
  for (const dir of dirs) {
    if (!dir) continue;
    const found = candidates(p.join(dir.replace(/^"|"$/g, ''), command)).find(isFile);
    if (found) return found;
  }
  return undefined;
}

/** Windows spells it Path as often as PATH. */
function pathVar(env: Record<string, string>, name: string): string | undefined {
  const key = Object.keys(env).find((k) => k.toUpperCase() === name);
  return key === undefined ? undefined : env[key];
}

// cmd.exe needs its metacharacters escaped with ^ (the same rules as cross-spawn, which the SDK's
// own stdio transport uses): Node refuses to run .cmd/.bat files without a shell since 20.12.
const CMD_META = /([()\][%!^"`<>&|;, *?])/g;

export function cmdQuote(arg: string): string {
  let a = arg.replace(/(?=(\\+?)?)\1"/g, '$1$1\\"');
  a = a.replace(/(?=(\\+?)?)\1$/, '$1$1');
  return `"${a}"`.replace(CMD_META, '^$1');
}

export function createSpawnLauncher(options: SpawnLauncherOptions = {}): McpLauncher {
  const platform = options.platform ?? process.platform;
  return {
    async launch(spec) {
      const resolved = resolveCommand(spec.command, spec.env, spec.cwd, platform);
      if (!resolved) throw new McpLaunchError(notFound(spec.command, spec.env, platform));
      let file = resolved;
      let args = spec.args;
      let verbatim = false;
      if (platform === 'win32' && /\.(cmd|bat)$/i.test(resolved)) {
        file = pathVar(spec.env, 'COMSPEC') ?? 'cmd.exe';
        args = ['/d', '/s', '/c', `"${[resolved, ...spec.args].map(cmdQuote).join(' ')}"`];
        verbatim = true;
      }
      const child = spawn(file, args, {
        env: spec.env,
        cwd: spec.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        // Not detached: a new session would put it in its own scheduling autogroup on Linux,
        // which costs every call a wake-up across groups; its tree is found with ps instead.
        windowsHide: true,
        windowsVerbatimArguments: verbatim,
        shell: false,
      });
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', (err: NodeJS.ErrnoException) =>
          reject(
            new McpLaunchError(
              err.code === 'ENOENT'
                ? notFound(spec.command, spec.env, platform)
                : err.code === 'EACCES'
                  ? `'${spec.command}' cannot be run (permission denied)`
                  : `'${spec.command}' could not be started: ${err.message}`,
            ),
          ),
        );
      });
      return childProcess(child, platform);
    },
  };
}

function notFound(command: string, env: Record<string, string>, platform: NodeJS.Platform): string {
  const dirs = (pathVar(env, 'PATH') ?? '').split(platform === 'win32' ? ';' : ':').filter(Boolean);
  const shown = dirs.slice(0, 6).join(platform === 'win32' ? ';' : ':');
  const windowsHint =
    platform === 'win32' && !/\.(cmd|exe|bat)$/i.test(command)
      ? ` (on Windows, npx and other Node tools are '${command}.cmd')`
      : '';
  return `the command '${command}' was not found${windowsHint}; searched PATH: ${shown || '(empty)'}${dirs.length > 6 ? ':…' : ''}`;
}

/** A spawned child as an McpProcess. */
export function childProcess(child: ChildProcess, platform: NodeJS.Platform): McpProcess {
  // Settled once its output is read to the end ('close'), so the last stderr lines are in the log
  // when the exit is reported; a grandchild holding the pipes open delays that by at most 500 ms.
  const exited = new Promise<McpExit>((resolve) => {
    const done = () => resolve({ code: child.exitCode, signal: child.signalCode });
    child.once('close', done);
    child.once('exit', () => setTimeout(done, 500).unref());
  });
  // A server that closes its stdin early makes our writes fail: that is an exit, not a crash of ours.
  child.stdin?.on('error', () => undefined);
  let killing: Promise<void> | undefined;
  const signal = (pids: readonly number[], sig: NodeJS.Signals): void => {
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        // Already gone.
      }
    }
  };
  return {
    pid: child.pid,
    stdin: child.stdin!,
    stdout: child.stdout!,
    stderr: child.stderr,
    exited,
    kill(graceMs = 2000) {
      killing ??= (async () => {
        const pid = child.pid;
        const done = (ms: number) =>
          Promise.race([exited.then(() => true), sleep(ms).then(() => false)]);
        if (pid === undefined) return;
        if (platform === 'win32') {
          child.stdin?.end();
          if (!(await done(Math.min(graceMs, 500)))) {
            spawn('taskkill', ['/pid', String(pid), '/T', '/F'], {
              windowsHide: true,
              stdio: 'ignore',
            }).on('error', () => undefined);
            await done(graceMs);
          }
          return;
        }
        // The tree is read before anything ends: once the server exits, what it started is
        // handed to init and can no longer be told from anyone else's processes.
        const tree = [pid, ...(await descendants(pid))];
        child.stdin?.end();
        if (!(await done(Math.min(graceMs, 500)))) {
          signal(tree, 'SIGTERM');
          if (!(await done(graceMs))) signal(tree, 'SIGKILL');
          await done(graceMs);
        }
        // A child that ignored its stdin closing outlives its parent: end it too.
        signal(tree.slice(1).filter(alive), 'SIGKILL');
      })();
      return killing;
    },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every process below `root`, from one `ps` listing (Linux and macOS spell it the same). */
export async function descendants(root: number): Promise<number[]> {
  const text = await new Promise<string>((resolve) => {
    let out = '';
    const ps = spawn('ps', ['-A', '-o', 'pid=,ppid='], { stdio: ['ignore', 'pipe', 'ignore'] });
    ps.stdout.on('data', (c: Buffer) => {
      if (out.length < 4 * 1024 * 1024) out += c.toString('latin1');
    });
    ps.on('error', () => resolve(''));
    ps.on('close', () => resolve(out));
  });
  const children = new Map<number, number[]>();
  for (const line of text.split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (!pid || ppid === undefined || Number.isNaN(ppid)) continue;
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const found = new Set<number>();
  const queue = [root];
  while (queue.length && found.size < 10_000) {
    for (const kid of children.get(queue.shift()!) ?? []) {
      if (kid === root || found.has(kid)) continue;
      found.add(kid);
      queue.push(kid);
    }
  }
  return [...found];
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
