/** Electron when its preload put window.agent there; otherwise the browser host's WebSocket. */
import { createIpcBridge } from './ipc.js';
import type { Bridge } from './types.js';
import { createWsBridge } from './ws.js';

export function startBridge(): Bridge {
  const agent = window.agent;
  if (agent && typeof agent.invoke === 'function' && typeof agent.on === 'function')
    return createIpcBridge(agent);
  return createWsBridge();
}

export type { Bridge, BridgeStatus } from './types.js';
export { BridgeError, errorMessage } from './types.js';
