/**
 * `advent-agent ui`: the agent with its window in the browser. One CoreApi, the built renderer and
 * the bridge on 127.0.0.1, one printed line with the address (and its key), then it runs until a
 * signal. `startUi` is the same thing as a function, for `npm start` and the end-to-end tests.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CoreApi } from '../../app/api.js';
import type { UiArgs } from './args.js';
import { CliCore } from './cli-core.js';
import type { CliIo } from './io.js';
import { removeLaunchPage, writeLaunchPage } from './launch-page.js';
import { openInBrowser } from './open-browser.js';
import { startUiServer } from './ui-server.js';
import { startDemoServer } from '../../sim/demo-server.js';
import { oneLine } from './terminal-text.js';

export interface RunningUi {
  /** The page's address with its token. */
  url: string;
  token: string;
  port: number;
  api: CoreApi;
  /** Close the page server and the agent (goodbye handshakes, audit flush); safe to call twice. */
  stop(): Promise<void>;
}

/** Start the agent and its browser UI; rejects with a message for the user when it cannot. */
export async function startUi(args: UiArgs, io: CliIo): Promise<RunningUi> {
  const core = await CliCore.open(args, io, {
    host: 'browser',
    demo: startDemoServer,
    autoConnect: true,
  });
  const { api } = core;
  const dataDir = path.resolve(args.dataDir ?? io.dataDir());
  // Only now, with the data folder locked to this run: a launch page found here was left by a run
  // that was killed outright (or lost power), never the page of a `ui` still running.
  await removeLaunchPage(dataDir);

  let server: Awaited<ReturnType<typeof startUiServer>>;
  try {
    await core.connect();
    server = await startUiServer({
      api,
      port: args.listenPort,
      staticDir: io.rendererDir ?? defaultRendererDir(),
      log: (line) => io.stderr.write(`advent-agent: ${oneLine(line)}\n`),
    });
  } catch (err) {
    await core.close();
    throw err;
  }

  io.stdout.write(`Advent Agent is running at ${server.url}\n`);
  if (args.open) {
    const open = io.openUrl ?? ((url: string) => openInBrowser(url));
    await writeLaunchPage(dataDir, server.url)
      .then(open)
      .catch((err: unknown) =>
        io.stderr.write(
          `advent-agent: could not open a browser (${(err as Error).message}); open the address above yourself\n`,
        ),
      );
  }

  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    // Before the lock goes with the core: after it, the page may be the next run's. Every ending
    // comes here (Ctrl-C, SIGTERM, `npm start`'s and the tests' stop); only a hard kill does not.
    await removeLaunchPage(dataDir);
    // Pages first: their prompts are cancelled (a "no" to the server) before the goodbye.
    await server.close();
    await core.close();
  };
  return {
    url: server.url,
    token: server.token,
    port: server.port,
    api,
    stop: () => (stopping ??= stop()),
  };
}

/** `advent-agent ui`: start, print the address, run until Ctrl-C or SIGTERM, exit 0. */
export async function uiCommand(args: UiArgs, io: CliIo): Promise<number> {
  let signalled!: () => void;
  const signal = new Promise<void>((resolve) => (signalled = resolve));
  // Listen from the start: a signal while starting up still ends the run once it is up.
  const unsubscribe = io.onSignal(() => signalled());
  let ui: RunningUi;
  try {
    ui = await startUi(args, io);
  } catch (err) {
    unsubscribe();
    io.stderr.write(`advent-agent: ${oneLine((err as Error).message)}\n`);
    return 2;
  }
  await signal;
  unsubscribe();
  await ui.stop();
  return 0;
}

/** dist/renderer of this package, found from this file whether it runs from dist/ or source. */
export function defaultRendererDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'dist', 'renderer');
    const up = path.dirname(dir);
    if (up === dir) throw new Error('cannot find the advent-agent package folder');
    dir = up;
  }
}
