/**
 * The terminal's view of imported MCP servers: one line each time a server's status changes
 * (ready with its tool count, failed with the reason, restarting), not one per re-list.
 */
import type { CoreApi } from '../../app/api.js';
import type { McpServerView } from '../../app/contract/mcp.js';
import type { LineOutput } from './reminders.js';

export function mcpServerLine({ name, state }: McpServerView): string | undefined {
  switch (state.status) {
    case 'ready':
      return `MCP server ${name}: ready, ${state.tools} tool${state.tools === 1 ? '' : 's'}`;
    case 'failed':
      return `MCP server ${name}: failed: ${state.reason}`;
    case 'restarting':
      return `MCP server ${name}: ${state.reason}; restarting`;
    default:
      return undefined;
  }
}

/**
 * Print where each MCP server stands now (one that failed while the core opened included), then
 * every change of status; resolves with the unsubscribe function.
 */
export async function printMcpServers(
  api: Pick<CoreApi, 'events' | 'listMcpServers'>,
  out: LineOutput,
): Promise<() => void> {
  const shown = new Map<string, string>();
  const show = (view: McpServerView): void => {
    const line = mcpServerLine(view);
    if (line === undefined || shown.get(view.id) === line) return;
    shown.set(view.id, line);
    if (view.state.status === 'ready') out.info(line);
    else out.notice('warn', line);
  };
  const offRemoved = api.events.on('mcpServerRemoved', ({ id }) => shown.delete(id));
  const off = api.events.on('mcpServer', show);
  for (const view of await api.listMcpServers()) show(view);
  return () => {
    off();
    offRemoved();
  };
}
