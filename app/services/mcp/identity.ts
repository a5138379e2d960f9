/**
 * Who a server is, for remembered grants: its name and what it runs or where it lives (command,
 * arguments, working folder, URL). A renamed server, or one that now runs something else or talks
 * to another address, is a different server: "always allow" given to the old one does not carry
 * over. Environment values and headers are left out on purpose (they hold secrets, and a rotated
 * token is the same server).
 */
import { createHash } from 'node:crypto';
import type { McpServerConfig } from '../../contract/mcp.js';

export function serverIdentity(
  config: Pick<McpServerConfig, 'name' | 'transport' | 'command' | 'args' | 'cwd' | 'url'>,
): string {
  const what =
    config.transport === 'stdio'
      ? { command: config.command ?? '', args: config.args ?? [], cwd: config.cwd ?? '' }
      : { url: config.url ?? '' };
  return createHash('sha256')
    .update(JSON.stringify({ name: config.name, transport: config.transport, ...what }))
    .digest('hex')
    .slice(0, 16);
}
