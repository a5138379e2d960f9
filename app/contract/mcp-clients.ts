/**
 * Other apps that run MCP servers (Claude Desktop, Cursor, VS Code) and the entry that makes them
 * run this agent's services: what Settings shows for each, the change it would make to the app's
 * config file, and what writing it did. Pure TS: the renderer imports it.
 */

export const MCP_CLIENT_APPS = ['claude', 'cursor', 'vscode'] as const;
export type McpClientApp = (typeof MCP_CLIENT_APPS)[number];

/** The key of our entry in the other apps' server lists. */
export const MCP_CLIENT_ENTRY_NAME = 'advent-agent';

/** How an MCP client starts this agent's stdio server. */
export interface McpLaunch {
  command: string;
  args: string[];
}

/**
 * Our entry in the app's file: not there, there and the same as the snippet, there but different
 * (an older command path), or unknown because the file cannot be read as JSON.
 */
export type McpClientEntryState = 'absent' | 'current' | 'different' | 'unreadable';

export interface McpClientView {
  app: McpClientApp;
  configPath: string;
  /** The app's own folder exists, so it is (or was) installed and its file may be created. */
  installed: boolean;
  /** The config file exists. */
  exists: boolean;
  entry: McpClientEntryState;
  /** The whole file as it would be for someone who has none yet: what "Copy" copies. */
  snippet: string;
  launch: McpLaunch;
  /**
   * False when the host did not say how it is launched: the snippet then names `advent-agent`
   * and relies on it being on the app's PATH.
   */
  resolved: boolean;
}

/** One line of a change, or a run of unchanged lines left out. */
export type DiffLine = { op: 'same' | 'add' | 'del'; text: string } | { op: 'skip'; count: number };

export interface McpClientSetupPreview {
  /** Pass to `applyMcpClientSetup`; valid for a few minutes and for one apply. */
  id: string;
  app: McpClientApp;
  configPath: string;
  /** The file does not exist yet and will be created. */
  creates: boolean;
  /** What happens to our entry: added, replaced (it was different), or nothing (already there). */
  change: 'add' | 'replace' | 'none';
  /** The lines shown, credential-like values as `***` (the file keeps them; app/mcp-clients/mask.ts). */
  diff: DiffLine[];
  /** Some value in `diff` is shown as `***`. */
  masked: boolean;
}

export interface McpClientSetupResult {
  app: McpClientApp;
  configPath: string;
  changed: boolean;
  created: boolean;
  /** The copy of the file as it was before, kept beside it (absent when there was no file). */
  backupPath?: string;
}
