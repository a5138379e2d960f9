/**
 * The desktop apps that run MCP servers, where each keeps its server list per platform and the
 * shape of an entry in it: Claude Desktop's `claude_desktop_config.json` and Cursor's global
 * `~/.cursor/mcp.json` (`mcpServers`, command + args), VS Code's user `mcp.json` (`servers`, with
 * `"type": "stdio"`; JSON with comments). Import (app/services/mcp) reads the same files.
 */
import os from 'node:os';
import path from 'node:path';
import type { McpClientApp, McpLaunch } from '../contract/mcp-clients.js';

export interface PlatformInfo {
  platform: NodeJS.Platform;
  home: string;
  env: Readonly<Record<string, string | undefined>>;
}

/** This computer's platform, home folder and environment, each unless given (tests: a temp home). */
export function platformInfo(given: Partial<PlatformInfo> = {}): PlatformInfo {
  return {
    platform: given.platform ?? process.platform,
    home: given.home ?? os.homedir(),
    env: given.env ?? process.env,
  };
}

export interface ClientAppSpec {
  app: McpClientApp;
  /** The app's name, for terminals and logs (the UI translates its own). */
  name: string;
  /** The top-level key holding the server entries. */
  serversKey: 'mcpServers' | 'servers';
  /** The file may carry comments and trailing commas. */
  jsonc: boolean;
  entry(launch: McpLaunch): Record<string, unknown>;
}

const commandEntry = (launch: McpLaunch) => ({ command: launch.command, args: [...launch.args] });

export const CLIENT_APPS: Readonly<Record<McpClientApp, ClientAppSpec>> = {
  claude: {
    app: 'claude',
    name: 'Claude Desktop',
    serversKey: 'mcpServers',
    jsonc: false,
    entry: commandEntry,
  },
  cursor: {
    app: 'cursor',
    name: 'Cursor',
    serversKey: 'mcpServers',
    jsonc: false,
    entry: commandEntry,
  },
  vscode: {
    app: 'vscode',
    name: 'VS Code',
    serversKey: 'servers',
    jsonc: true,
    entry: (launch) => ({ type: 'stdio', ...commandEntry(launch) }),
  },
};

function joinFor(info: PlatformInfo): (...parts: string[]) => string {
  return info.platform === 'win32' ? path.win32.join : path.posix.join;
}

/** The folder apps keep per-user configuration in: Application Support, %APPDATA%, XDG. */
export function appConfigDir(info: PlatformInfo): string {
  const join = joinFor(info);
  const { platform, home, env } = info;
  if (platform === 'darwin') return join(home, 'Library', 'Application Support');
  if (platform === 'win32') return env.APPDATA ?? join(home, 'AppData', 'Roaming');
  return env.XDG_CONFIG_HOME || join(home, '.config');
}

/**
 * The folder an app makes when it first runs: where it exists, the app is (or was) installed and
 * a config file may be created in it.
 */
export function clientAppDir(app: McpClientApp, info: PlatformInfo): string {
  const join = joinFor(info);
  switch (app) {
    case 'claude':
      return join(appConfigDir(info), 'Claude');
    case 'cursor':
      return join(info.home, '.cursor');
    case 'vscode':
      return join(appConfigDir(info), 'Code');
  }
}

export function clientConfigPath(app: McpClientApp, info: PlatformInfo): string {
  const join = joinFor(info);
  switch (app) {
    case 'claude':
      return join(clientAppDir(app, info), 'claude_desktop_config.json');
    case 'cursor':
      return join(clientAppDir(app, info), 'mcp.json');
    case 'vscode':
      return join(clientAppDir(app, info), 'User', 'mcp.json');
  }
}
