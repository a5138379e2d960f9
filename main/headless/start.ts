/**
 * `npm start` (DESIGN §7): the desktop window where Electron can run, else the same UI in the
 * browser. Electron needs its binary (fetched on first launch, which fails offline), its built main
 * entry and, on Linux, a display; when any is missing, or it dies within a moment of starting, one
 * line says why and the browser host takes over with the same arguments.
 */
import { type ChildProcess, type SpawnOptions, spawn as nodeSpawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { noDisplayReason } from './open-browser.js';

export interface StartDeps {
  /** The package folder (Electron's app dir). */
  root: string;
  /** Extra arguments: given to Electron, or to `advent-agent ui --open`. */
  argv: string[];
  /** The Electron binary (what `require('electron')` gives), or why there is none. */
  electronPath: () => string | Error;
  /** The browser host: `advent-agent ui --open ...argv`; resolves with its exit code. */
  runUi: (argv: string[]) => Promise<number>;
  platform?: NodeJS.Platform;
  env?: NodeJS.ProcessEnv;
  exists?: (file: string) => boolean;
  spawn?: (command: string, args: string[], options: SpawnOptions) => ChildProcess;
  /** One line for the user. */
  say?: (line: string) => void;
  /** Where Electron's stderr goes once it is running. */
  stderr?: NodeJS.WritableStream;
  /** Forward Ctrl-C / SIGTERM to Electron; returns an unsubscribe function. */
  onSignal?: (handler: (signal: NodeJS.Signals) => void) => () => void;
  /** An Electron that exits with an error sooner than this never really started (default 2 s). */
  graceMs?: number;
}

/** Why Electron cannot start here, or the binary and entry to start it with. */
export function electronProblem(
  deps: Pick<StartDeps, 'root' | 'electronPath' | 'platform' | 'env' | 'exists'>,
): { why: string } | { binary: string } {
  const exists = deps.exists ?? existsSync;
  const noDisplay = noDisplayReason(deps.platform ?? process.platform, deps.env ?? process.env);
  if (noDisplay) return { why: noDisplay };
  const main = mainEntry(deps.root);
  if (main instanceof Error) return { why: main.message };
  if (!exists(path.join(deps.root, main)))
    return { why: `the desktop app is not built: ${main} is missing` };
  const binary = deps.electronPath();
  if (binary instanceof Error || !exists(binary)) return { why: 'no Electron binary downloaded' };
  return { binary };
}

export async function startApp(deps: StartDeps): Promise<number> {
  const say = deps.say ?? ((line: string) => console.log(line));
  const fallBack = (why: string): Promise<number> => {
    say(`Electron cannot start here (${why}); opening the browser UI instead.`);
    return deps.runUi(deps.argv);
  };

  const found = electronProblem(deps);
  if ('why' in found) return fallBack(found.why);

  const outcome = await launchElectron(found.binary, deps);
  if (outcome.kind === 'failed') return fallBack(outcome.why);
  return outcome.code;
}

type Launch = { kind: 'failed'; why: string } | { kind: 'ran'; code: number };

/** Run Electron; 'failed' when it could not start or died with an error within the grace period. */
function launchElectron(binary: string, deps: StartDeps): Promise<Launch> {
  const spawn = deps.spawn ?? nodeSpawn;
  const stderr = deps.stderr ?? process.stderr;
  const onSignal = deps.onSignal ?? processSignals;
  const env = { ...(deps.env ?? process.env) };
  // Set in some shells and CI images; it would make Electron behave as plain Node.
  delete env.ELECTRON_RUN_AS_NODE;

  return new Promise<Launch>((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(binary, ['.', ...deps.argv], {
        cwd: deps.root,
        env,
        // stderr is held back at first: an Electron that dies at once must not flood the terminal.
        stdio: ['inherit', 'inherit', 'pipe'],
      });
    } catch (err) {
      resolve({ kind: 'failed', why: `it could not be started: ${(err as Error).message}` });
      return;
    }
    let early: Buffer[] | undefined = [];
    child.stderr?.on('data', (chunk: Buffer) => (early ? early.push(chunk) : stderr.write(chunk)));
    const unsubscribe = onSignal((signal) => child.kill(signal));
    const finish = (result: Launch): void => {
      clearTimeout(timer);
      unsubscribe();
      resolve(result);
    };

    const timer = setTimeout(() => {
      // Still running: it started. Show what it said so far and from now on as it comes.
      for (const chunk of early ?? []) stderr.write(chunk);
      early = undefined;
    }, deps.graceMs ?? 2000);

    child.once('error', (err) =>
      finish({ kind: 'failed', why: `it could not be started: ${err.message}` }),
    );
    child.once('exit', (code, signal) => {
      if (early && code !== 0) {
        const said = Buffer.concat(early).toString('utf8').trim().split('\n')[0]?.trim();
        const how = signal ? `was killed by ${signal}` : `exited at once with code ${code}`;
        return finish({ kind: 'failed', why: `it ${how}${said ? `: ${said.slice(0, 200)}` : ''}` });
      }
      // Ctrl-C reaches Electron too; ending by a signal is how the user closes it from a terminal.
      finish({ kind: 'ran', code: code ?? (signal === 'SIGINT' || signal === 'SIGTERM' ? 0 : 1) });
    });
  });
}

/** `main` of package.json: the Electron entry. */
function mainEntry(root: string): string | Error {
  try {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      main?: unknown;
    };
    if (typeof pkg.main === 'string' && pkg.main) return pkg.main;
    return new Error('package.json names no Electron entry ("main")');
  } catch (err) {
    return new Error(`cannot read package.json: ${(err as Error).message}`);
  }
}

function processSignals(handler: (signal: NodeJS.Signals) => void): () => void {
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}
