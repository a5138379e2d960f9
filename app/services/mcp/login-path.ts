/**
 * The user's PATH as their login shell sets it. Apps started from Finder or a desktop launcher
 * get a minimal PATH (/usr/bin:/bin…), so `npx`, `node` or `uvx` installed through Homebrew, nvm
 * or pipx are not found; the shell's own startup files know where they are. Asked once, with a
 * time limit (a shell that waits for input must not hang the app), and remembered.
 */
import { spawn } from 'node:child_process';

const MARK = '__ADVENT_AGENT_PATH__';
const MAX_OUTPUT = 64 * 1024;

export interface LoginPathOptions {
  shell?: string;
  platform?: NodeJS.Platform;
  timeoutMs?: number;
}

/** The login shell's PATH, or undefined when there is none to ask (Windows) or it fails. */
export function readLoginShellPath(options: LoginPathOptions = {}): Promise<string | undefined> {
  const platform = options.platform ?? process.platform;
  const shell = options.shell ?? process.env.SHELL;
  if (platform === 'win32' || !shell) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let out = '';
    let settled = false;
    const finish = (value: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    // The marks keep whatever the startup files print (a banner, a fortune) out of the answer.
    const child = spawn(shell, ['-ilc', `printf '${MARK}%s${MARK}' "$PATH"`], {
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true,
      env: { ...process.env, DISABLE_AUTO_UPDATE: 'true' },
    });
    const timer = setTimeout(() => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
      finish(undefined);
    }, options.timeoutMs ?? 5000);
    child.stdout.on('data', (chunk: Buffer) => {
      if (out.length < MAX_OUTPUT) out += chunk.toString('utf8');
    });
    child.on('error', () => finish(undefined));
    child.on('close', () => {
      const m = new RegExp(`${MARK}(.*?)${MARK}`, 's').exec(out);
      finish(m?.[1]?.trim() || undefined);
    });
  });
}

/** `first`'s entries, then those of `rest` not already in it. */
export function mergePath(first: string | undefined, rest: string | undefined, sep = ':'): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const part of [...(first ?? '').split(sep), ...(rest ?? '').split(sep)]) {
    if (part && !seen.has(part)) {
      seen.add(part);
      out.push(part);
    }
  }
  return out.join(sep);
}

let cached: Promise<string | undefined> | undefined;

/** The search PATH for servers the agent starts: the login shell's first, then our own. */
export function loginSearchPath(options: LoginPathOptions = {}): Promise<string | undefined> {
  cached ??= readLoginShellPath(options).then((login) =>
    login ? mergePath(login, process.env.PATH) : process.env.PATH,
  );
  return cached;
}
