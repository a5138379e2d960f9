/**
 * `advent-agent ui`: the agent with its window in the browser. One CoreApi, the built renderer and
 * the bridge on 127.0.0.1, one printed line with the address (and its key), then it runs until a
 * signal. `startUi` is the same thing as a function, for `npm start` and the end-to-end tests.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreApi } from '../../app/api.js';
import { checkCommand } from '../../app/contract/validate.js';
import { FileSecretStore } from '../../app/settings/secrets.js';
import { type UiArgs, overridesOf } from './args.js';
import type { CliIo } from './io.js';
import { openInBrowser } from './open-browser.js';
import { RunSecretStore } from './run-secrets.js';
import { type FlagConnection, flagConnections } from './flag-profiles.js';
import { startUiServer } from './ui-server.js';
import { startDemoServer } from '../../sim/demo-server.js';
import { readMcpConfigs } from './mcp-config.js';

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
  const dataDir = path.resolve(args.dataDir ?? io.dataDir());
  const saved = await FileSecretStore.open(path.join(dataDir, 'secrets.json'));
  for (const warning of saved.warnings) io.stderr.write(`advent-agent: ${warning}\n`);
  const secrets = new RunSecretStore(saved);
  const mcp = await readMcpConfigs(args.mcpConfigs);
  for (const warning of mcp.warnings) io.stderr.write(`advent-agent: ${warning}\n`);

  const api = await CoreApi.open({
    mcp: { runOnly: mcp.servers },
    dataDir,
    defaultFilesRoot: io.filesRoot(),
    secrets,
    host: 'browser',
    version: io.version,
    overrides: overridesOf(args),
    timing: io.timing,
    wsTiming: io.wsTiming,
    demo: startDemoServer,
    dialects: io.dialects,
  });

  let flagProfiles: string[] = [];
  let server: Awaited<ReturnType<typeof startUiServer>>;
  try {
    const targets = await flagConnections(args.servers, api.agent.dialects, dataDir);
    flagProfiles = await connectFlagProfiles(api, secrets, targets);
    server = await startUiServer({
      api,
      port: args.listenPort,
      staticDir: io.rendererDir ?? defaultRendererDir(),
      log: (line) => io.stderr.write(`advent-agent: ${line}\n`),
    });
  } catch (err) {
    await api.close();
    throw err;
  }

  io.stdout.write(`Advent Agent is running at ${server.url}\n`);
  if (args.open) {
    const open = io.openUrl ?? ((url: string) => openInBrowser(url));
    await open(server.url).catch((err: unknown) =>
      io.stderr.write(
        `advent-agent: could not open a browser (${(err as Error).message}); open the address above yourself\n`,
      ),
    );
  }

  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    // Pages first: their prompts are cancelled (a "no" to the server) before the goodbye.
    await server.close();
    // The flags' servers were for this run only: leave no profile of them behind.
    for (const id of flagProfiles) await api.deleteConnection(id).catch(() => undefined);
    await api.close();
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
    io.stderr.write(`advent-agent: ${(err as Error).message}\n`);
    return 2;
  }
  await signal;
  unsubscribe();
  await ui.stop();
  return 0;
}

/**
 * The servers given by flags become profiles with fixed ids (`cli-…`), so a second run reuses
 * them instead of piling up copies; their tokens stay in memory. The first one that chats becomes
 * the active connection.
 */
async function connectFlagProfiles(
  api: CoreApi,
  secrets: RunSecretStore,
  targets: FlagConnection[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const { profile, secret } of targets) {
    const checked = checkCommand('saveConnection', [profile]);
    if (!checked.ok) throw new Error(`${profile.name}: ${checked.message}`);
    // Same key format as CoreApi's token store (app/api.ts tokenKey).
    secrets.keepInMemory(`profile:${profile.id}:token`);
    await api.saveConnection(profile, secret);
    ids.push(profile.id);
    await api.connect(profile.id);
  }
  const chat = targets.find(
    (t) => api.agent.dialects.get(t.profile.kind)?.profile.capabilities.chat,
  );
  if (chat) await api.setActiveConnection(chat.profile.id);
  return ids;
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
