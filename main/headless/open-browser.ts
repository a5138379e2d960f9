/**
 * Open a URL in the user's default browser (`ui --open`, `npm start`): `open` on macOS, `start` on
 * Windows, `xdg-open` elsewhere — and on Linux and the other Unixes only when a display exists,
 * since on a server or over plain SSH a text browser would take over the terminal or nothing would
 * happen at all.
 */
import { type ChildProcess, type SpawnOptions, spawn as nodeSpawn } from 'node:child_process';

export interface OpenBrowserDeps {
  platform?: NodeJS.Platform;
  env?: Readonly<Record<string, string | undefined>>;
  spawn?: (command: string, args: string[], options: SpawnOptions) => ChildProcess;
  /** How long an opener that is still running counts as having worked (xdg-open may stay). */
  settleMs?: number;
}

/** Why no graphical session can show a browser here, or undefined when one can. */
export function noDisplayReason(
  platform: NodeJS.Platform,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (platform === 'darwin' || platform === 'win32') return undefined;
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return undefined;
  return 'no display: DISPLAY and WAYLAND_DISPLAY are not set';
}

export function openerCommand(platform: NodeJS.Platform, url: string): [string, string[]] {
  if (platform === 'darwin') return ['open', [url]];
  // `start` is a cmd built-in; the empty title keeps it from taking the URL as the window title.
  // What we open is the launch page's file URL (launch-page.ts): percent-encoded, no quotes, so
  // verbatim arguments are safe.
  if (platform === 'win32') return ['cmd', ['/d', '/s', '/c', 'start', '""', url]];
  return ['xdg-open', [url]];
}

/** Resolves once the browser was asked to open the URL; rejects with the reason it could not. */
export function openInBrowser(url: string, deps: OpenBrowserDeps = {}): Promise<void> {
  const platform = deps.platform ?? process.platform;
  const env = deps.env ?? process.env;
  const spawn = deps.spawn ?? nodeSpawn;
  const why = noDisplayReason(platform, env);
  if (why) return Promise.reject(new Error(why));
  const [command, args] = openerCommand(platform, url);
  return new Promise<void>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(command, args, {
        stdio: 'ignore',
        detached: platform !== 'win32',
        windowsVerbatimArguments: platform === 'win32',
      });
    } catch (err) {
      reject(new Error(`${command} could not be started: ${(err as Error).message}`));
      return;
    }
    const timer = setTimeout(() => {
      child.unref();
      resolve();
    }, deps.settleMs ?? 3000);
    timer.unref();
    child.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new Error(
          err.code === 'ENOENT'
            ? `${command} is not installed`
            : `${command} failed: ${err.message}`,
        ),
      );
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${command} exited with ${signal ?? `code ${code}`}`));
    });
  });
}
