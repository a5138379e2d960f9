/**
 * Where the desktop MCP hosts keep their server lists, per platform, so "Import from Claude"
 * needs no file picker. The paths are the ones one-click setup writes to (app/mcp-clients/apps.ts).
 */
import type { McpImportSource } from '../../contract/mcp.js';
import { type PlatformInfo, clientConfigPath } from '../../mcp-clients/apps.js';

export type { PlatformInfo };

export function importSourcePath(source: McpImportSource, info: PlatformInfo): string {
  return clientConfigPath(source, info);
}
