/**
 * The one way services start programs on this computer: a program and an argument array, never a
 * shell, so nothing a server sends can become shell syntax. Injected (Desktop.runner), so tests
 * record the exact commands built for macOS and Windows and run Linux's for real.
 */
import { type ChildProcess, spawn } from 'node:child_process';

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

/**
 * On POSIX a program runs as the leader of a process group of its own, so that ending it (out of
 * time, or the call withdrawn) ends whatever it started too: a helper it forked would otherwise
 * run on after the call was answered, holding its output pipe. A program that ends by itself is
 * never touched, and neither is what it leaves running (xclip serving the selection). Windows has
 * no process groups; there the program alone is ended.
 */
const OWN_GROUP = process.platform !== 'win32';

function endTree(child: ChildProcess): void {
  if (OWN_GROUP && child.pid !== undefined)
    try {
      process.kill(-child.pid, 'SIGKILL');
      return;
    } catch {
      // Already gone, or the group could not be signalled: end the program itself.
    }
  child.kill('SIGKILL');
}

/**
 * Ends `child` and everything it started once `timeoutMs` pass or `signal` aborts; `ended()` says
 * whether it did. `clear()` when the program ended by itself.
 */
function deadline(
  child: ChildProcess,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): { ended(): boolean; clear(): void } {
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    endTree(child);
  };
  const timer = setTimeout(end, timeoutMs);
  if (signal?.aborted) end();
  else signal?.addEventListener('abort', end, { once: true });
  return {
    ended: () => ended,
    clear() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', end);
    },
  };
}

export const execRunner: Runner = {
  run: (cmd, args, options = {}) => runToEnd(cmd, args, options),

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

/**
 * Run to the end. Spawned rather than execFile'd: execFile cannot start a program in a process
 * group of its own. Capturing, it keeps at most `maxBytes` of stdout and of stderr (past that the
 * program is ended and the run fails) and ends at 'close', once the pipes are drained (what the
 * program left running may keep them open: that is waited for, bounded by the deadline). With
 * output 'ignore' it ends at 'exit', whatever the program left running.
 */
function runToEnd(cmd: string, args: readonly string[], options: RunOptions): Promise<RunOutput> {
  const capture = options.output !== 'ignore';
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(cmd, [...args], {
        stdio: capture ? 'pipe' : ['pipe', 'ignore', 'ignore'],
        windowsHide: true,
        detached: OWN_GROUP,
      });
    } catch (err) {
      return reject(new RunError('failed', `${cmd} could not start: ${(err as Error).message}`));
    }
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    const streams = [child.stdout, child.stderr].map((stream) => {
      const kept = { chunks: [] as Buffer[], bytes: 0 };
      stream?.on('data', (chunk: Buffer) => {
        kept.bytes += chunk.length;
        if (kept.bytes <= maxBytes) kept.chunks.push(chunk);
        else if (!tooMuch) {
          tooMuch = true;
          endTree(child);
        }
      });
      return kept;
    });
    const text = (i: number): string => Buffer.concat(streams[i]!.chunks).toString('utf8');
    let tooMuch = false;
    let done = false;
    const finish = (fn: () => void): void => {
      if (done) return;
      done = true;
      limit.clear();
      fn();
    };
    const limit = deadline(child, options.timeoutMs ?? DEFAULT_TIMEOUT_MS, options.signal);
    child.on('error', (e: NodeJS.ErrnoException) =>
      finish(() =>
        reject(
          e.code === 'ENOENT'
            ? new RunError('not_found', `${cmd} is not installed`)
            : new RunError('failed', `${cmd} could not start: ${e.message}`),
        ),
      ),
    );
    child.on(capture ? 'close' : 'exit', (code: number | null, signal: NodeJS.Signals | null) =>
      finish(() => {
        const stdout = text(0);
        const stderr = text(1);
        if (limit.ended())
          return reject(new RunError('timeout', `${cmd} did not finish in time`, stderr));
        if (tooMuch) return reject(new RunError('failed', `${cmd} printed more than expected`));
        if (code === 0) return resolve({ stdout, stderr });
        const why =
          lastLines(stderr) ||
          (code === null ? `signal ${String(signal)}` : `exit code ${String(code)}`);
        reject(new RunError('failed', `${cmd} failed: ${why}`, stderr));
      }),
    );
    // A program that does not read its stdin must not fail the run with EPIPE.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}
