/**
 * The MCP servers as the page shows them: loaded when the page opens (and again after the bridge
 * reconnects), then kept current by the `mcpServer` / `mcpServerRemoved` events.
 */
import { create } from 'zustand';
import type { McpServerView } from '../../../app/contract/index.js';
import type { Bridge } from '../../bridge/types.js';

interface McpStore {
  servers: McpServerView[];
  loaded: boolean;
  replace(list: McpServerView[]): void;
  upsert(view: McpServerView): void;
  remove(id: string): void;
}

export const useMcp = create<McpStore>()((set) => ({
  servers: [],
  loaded: false,
  replace: (servers) => set({ servers, loaded: true }),
  upsert: (view) =>
    set((s) => {
      const at = s.servers.findIndex((v) => v.id === view.id);
      if (at < 0) return { servers: [...s.servers, view] };
      const servers = [...s.servers];
      servers[at] = view;
      return { servers };
    }),
  remove: (id) => set((s) => ({ servers: s.servers.filter((v) => v.id !== id) })),
}));

/** Follow the bridge while the page is open; returns the function that stops following. */
export function followMcp(bridge: Bridge): () => void {
  const load = () =>
    void bridge.invoke('listMcpServers').then(
      (list) => useMcp.getState().replace(list),
      () => undefined,
    );
  const offs = [
    bridge.on('mcpServer', (view) => useMcp.getState().upsert(view)),
    bridge.on('mcpServerRemoved', ({ id }) => useMcp.getState().remove(id)),
    bridge.onReady(load),
  ];
  if (bridge.status === 'open') load();
  return () => {
    for (const off of offs) off();
  };
}
