/**
 * `AdventAgent mcp [--data-dir DIR]`: the desktop app's own executable as the stdio MCP server an
 * app such as Claude Desktop launches (issue 12). The packaged app's fuses turn `runAsNode` off,
 * so `node bin/advent-agent.js` is not there to run: main.ts sees the `mcp` argument before the
 * single-instance lock and any window, and runs this instead — a relay into the running app when
 * it holds the data folder, else an agent of its own with no window and no voice connections.
 * Only MCP goes to stdout.
 */
import path from 'node:path';
import { app } from 'electron';
import { CoreApi } from '../../app/api.js';
import { relay, relayOrOpen } from '../../app/mcp-serve/relay.js';
import { systemDataDir, systemFilesRoot } from '../../app/settings/paths.js';
import { parseCliArgs, usage } from '../headless/args.js';
import { desktopOptions } from './desktop.js';
import { electronMcpOptions } from './mcp-launcher.js';
import { SafeStorageSecretStore } from './secrets.js';

export interface McpLaunch {
  command: string;
  args: string[];
}

/**
 * The arguments after `mcp` when this launch is one, else undefined. A packaged app's argv is
 * [exe, ...args]; `electron .` (process.defaultApp) has the app's path before them.
 */
export function mcpArgs(argv: readonly string[], defaultApp: boolean): string[] | undefined {
  const args = argv.slice(defaultApp ? 2 : 1);
  // Chromium switches may come first; the first word is the command.
  const at = args.findIndex((a) => !a.startsWith('-'));
  return at >= 0 && args[at] === 'mcp' ? args.slice(at + 1) : undefined;
}

/** How an MCP app starts this app's stdio server: the executable itself, `mcp`. */
export function electronMcpLaunch(
  packaged: boolean,
  execPath: string = process.execPath,
  appPath: () => string = () => app.getAppPath(),
): McpLaunch {
  return packaged
    ? { command: execPath, args: ['mcp'] }
    : { command: execPath, args: [path.resolve(appPath()), 'mcp'] };
}

function say(line: string): void {
  process.stderr.write(`AdventAgent mcp: ${line.replace(/[\r\n]+/g, ' ')}\n`);
}

/** Serve one MCP client on stdio; resolves with the exit code. */
export async function runMcp(rest: readonly string[]): Promise<number> {
  // Nothing but MCP may reach stdout: a stray console.log from any library goes to stderr.
  console.log = console.error;
  console.info = console.error;
  const parsed = parseCliArgs(['mcp', ...rest]);
  if (!parsed.ok) {
    say(parsed.message);
    return 2;
  }
  if (parsed.args.command === 'help') {
    process.stdout.write(usage(undefined, 'mcp').replaceAll('advent-agent mcp', 'AdventAgent mcp'));
    return 0;
  }
  const dataDir = path.resolve(
    (parsed.args.command === 'mcp' && parsed.args.dataDir) || systemDataDir(),
  );

  const open = async (): Promise<CoreApi> => {
    await app.whenReady();
    // No window: no Dock icon either (macOS).
    app.dock?.hide();
    const secrets = await SafeStorageSecretStore.open(path.join(dataDir, 'secrets.safe.json'));
    if (secrets.warning) say(secrets.warning);
    return CoreApi.open({
      dataDir,
      defaultFilesRoot: systemFilesRoot(),
      secrets,
      secretsWarning: secrets.warning,
      host: 'electron',
      version: app.getVersion(),
      autoConnect: false,
      mcp: electronMcpOptions(),
      desktop: desktopOptions(),
      mcpLaunch: electronMcpLaunch(app.isPackaged),
    });
  };
  let start: Awaited<ReturnType<typeof relayOrOpen<CoreApi>>>;
  try {
    // An agent still starting on the folder (two MCP apps launched together) is waited for.
    start = await relayOrOpen(dataDir, open);
  } catch (err) {
    say((err as Error).message);
    return 1;
  }
  if ('socket' in start) {
    say(`relaying to the Advent Agent that holds ${dataDir}`);
    await relay(start.socket, process.stdin, process.stdout);
    return 0;
  }
  const api = start.own;
  const notices = api.events.on('notice', (n) => say(`${n.level}: ${n.message}`));
  for (const { message } of api.agent.startupNotices) say(`warn: ${message}`);
  try {
    await api.mcpServe.serveStdio(process.stdin, process.stdout);
  } finally {
    notices();
    await api.close();
  }
  return 0;
}
