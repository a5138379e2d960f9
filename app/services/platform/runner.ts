/**
 * The one way services start programs on this computer: a program and an argument array, never a
 * shell, so nothing a server sends can become shell syntax. Injected (Desktop.runner), so tests
 * record the exact commands built for macOS and Windows and run Linux's for real.
 */
import { execFile, spawn } from 'node:child_process';

export interface RunOptions {
  /** Killed after this long (default 10 s). */
  timeoutMs?: number;
  /** Written to the program's stdin, then stdin is closed. */
  input?: string;
  signal?: AbortSignal;
  /** Output beyond this many bytes fails the run (default 1 MiB). */
  maxBytes?: number;
  /**
   * 'ignore' waits for the program to exit without reading its output. Clipboard writers (xclip,
   * xsel, wl-copy) fork a child that keeps serving the selection and holds inherited pipes open,
   * so waiting for the output to end would wait until the clipboard changes hands.
   */
  output?: 'capture' | 'ignore';
}

export interface LaunchOptions {
  /**
   * How long to watch a started program for an early failure (default 1.5 s): an opener such as
   * `xdg-open` that finds no handler exits non-zero at once; one still running after this, or
   * exiting 0, counts as started.
   */
  settleMs?: number;
}

export interface RunOutput {
  stdout: string;
  stderr: string;
}

export interface Runner {
  /** Run to the end and return the output; rejects with a RunError. */
  run(cmd: string, args: readonly string[], options?: RunOptions): Promise<RunOutput>;
  /** Start a program that outlives the call (a browser, an app); rejects with a RunError. */
  launch(cmd: string, args: readonly string[], options?: LaunchOptions): Promise<void>;
}

export type RunFailure = 'not_found' | 'failed' | 'timeout';

export class RunError extends Error {
  constructor(
    readonly reason: RunFailure,
    message: string,
    readonly stderr = '',
  ) {
    super(message);
    this.name = 'RunError';
  }
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BYTES = 1024 * 1024;
const DEFAULT_SETTLE_MS = 1500;
/** Enough of stderr to say why, never a wall of text in a message for the model. */
const STDERR_CHARS = 300;

function lastLines(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > STDERR_CHARS ? `…${trimmed.slice(-STDERR_CHARS)}` : trimmed;
}

export const execRunner: Runner = {
  run(cmd, args, options = {}) {
    if (options.output === 'ignore') return runIgnoringOutput(cmd, args, options);
    return new Promise((resolve, reject) => {
      const child = execFile(
        cmd,
        [...args],
        {
          encoding: 'utf8',
          timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          maxBuffer: options.maxBytes ?? DEFAULT_MAX_BYTES,
          windowsHide: true,
          signal: options.signal,
          // Out of time or cancelled, it ends now: a program that ignores SIGTERM would otherwise
          // run on (and the call wait for it) past its deadline.
          killSignal: 'SIGKILL',
        },
        (err, stdout, stderr) => {
          if (!err) return resolve({ stdout, stderr });
          const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: unknown };
          if (e.code === 'ENOENT')
            return reject(new RunError('not_found', `${cmd} is not installed`));
          if (e.killed || e.code === 'ABORT_ERR')
            return reject(new RunError('timeout', `${cmd} did not finish in time`, stderr));
          if (e.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER')
            return reject(new RunError('failed', `${cmd} printed more than expected`, ''));
          const why = lastLines(stderr) || `exit code ${String(e.code)}`;
          reject(new RunError('failed', `${cmd} failed: ${why}`, stderr));
        },
      );
      // A program that does not read its stdin must not fail the run with EPIPE.
      child.stdin?.on('error', () => undefined);
      if (options.input !== undefined) child.stdin?.end(options.input);
      else child.stdin?.end();
    });
  },

  launch(cmd, args, options = {}) {
    return new Promise((resolve, reject) => {
      let child;
      try {
        child = spawn(cmd, [...args], { detached: true, stdio: 'ignore', windowsHide: true });
      } catch (err) {
        return reject(new RunError('failed', `${cmd} could not start: ${(err as Error).message}`));
      }
      let done = false;
      const settle = (fn: () => void): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        child.unref();
        fn();
      };
      const timer = setTimeout(() => settle(resolve), options.settleMs ?? DEFAULT_SETTLE_MS);
      timer.unref?.();
      child.on('error', (err: NodeJS.ErrnoException) =>
        settle(() =>
          reject(
            err.code === 'ENOENT'
              ? new RunError('not_found', `${cmd} is not installed`)
              : new RunError('failed', `${cmd} could not start: ${err.message}`),
          ),
        ),
      );
      child.on('exit', (code, signal) =>
        settle(() =>
          code === 0
            ? resolve()
            : reject(
                new RunError(
                  'failed',
                  `${cmd} failed (${code === null ? `signal ${String(signal)}` : `exit code ${code}`})`,
                ),
              ),
        ),
      );
    });
  },
};

function runIgnoringOutput(
  cmd: string,
  args: readonly string[],
  options: RunOptions,
): Promise<RunOutput> {
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawn(cmd, [...args], {
        stdio: ['pipe', 'ignore', 'ignore'],
        windowsHide: true,
        signal: options.signal,
        killSignal: 'SIGKILL',
      });
    } catch (err) {
      return reject(new RunError('failed', `${cmd} could not start: ${(err as Error).message}`));
    }
    let done = false;
    const finish = (fn: () => void): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(() => reject(new RunError('timeout', `${cmd} did not finish in time`)));
    }, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    child.on('error', (err: NodeJS.ErrnoException) =>
      finish(() =>
        reject(
          err.code === 'ENOENT'
            ? new RunError('not_found', `${cmd} is not installed`)
            : err.code === 'ABORT_ERR'
              ? new RunError('timeout', `${cmd} did not finish in time`)
              : new RunError('failed', `${cmd} could not start: ${err.message}`),
        ),
      ),
    );
    child.on('exit', (code, signal) =>
      finish(() =>
        code === 0
          ? resolve({ stdout: '', stderr: '' })
          : reject(
              new RunError(
                'failed',
                `${cmd} failed (${code === null ? `signal ${String(signal)}` : `exit code ${code}`})`,
              ),
            ),
      ),
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}
