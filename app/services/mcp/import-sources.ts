/**
 * Where the desktop MCP hosts keep their server lists, per platform, so "Import from Claude"
 * needs no file picker: Claude Desktop's `claude_desktop_config.json`, Cursor's global
 * `~/.cursor/mcp.json`, VS Code's user `mcp.json`.
 */
import path from 'node:path';
import type { McpImportSource } from '../../contract/mcp.js';

export interface PlatformInfo {
  platform: NodeJS.Platform;
  home: string;
  env: Readonly<Record<string, string | undefined>>;
}

/** The folder apps keep per-user configuration in: Application Support, %APPDATA%, XDG. */
function appConfigDir({ platform, home, env }: PlatformInfo): string {
  const join = platform === 'win32' ? path.win32.join : path.posix.join;
  if (platform === 'darwin') return join(home, 'Library', 'Application Support');
  if (platform === 'win32') return env.APPDATA ?? join(home, 'AppData', 'Roaming');
  return env.XDG_CONFIG_HOME || join(home, '.config');
}

export function importSourcePath(source: McpImportSource, info: PlatformInfo): string {
  const join = info.platform === 'win32' ? path.win32.join : path.posix.join;
  switch (source) {
    case 'claude':
      return join(appConfigDir(info), 'Claude', 'claude_desktop_config.json');
    case 'cursor':
      return join(info.home, '.cursor', 'mcp.json');
    case 'vscode':
      return join(appConfigDir(info), 'Code', 'User', 'mcp.json');
  }
}
