import { create } from 'zustand';
import type { McpHttpState } from '../../app/contract/index.js';

/** The MCP HTTP endpoint's state, from the snapshot and then its event. */
interface McpHttpStore {
  state: McpHttpState;
  replace(state: McpHttpState): void;
}

export const useMcpHttp = create<McpHttpStore>()((set) => ({
  state: { status: 'off' },
  replace: (state) => set({ state }),
}));
