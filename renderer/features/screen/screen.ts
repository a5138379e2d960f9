/**
 * Screen captures the core asks this page for (browser host): queued from `screenRequest`, gone on
 * `screenRequestDone`. The picture itself is taken in capture.ts.
 */
import { create } from 'zustand';
import type { ScreenRequest } from '../../../app/contract/index.js';
import type { Bridge } from '../../bridge/types.js';

interface ScreenStore {
  requests: ScreenRequest[];
  add(r: ScreenRequest): void;
  remove(id: string): void;
}

export const useScreenRequests = create<ScreenStore>()((set) => ({
  requests: [],
  add: (r) => set((s) => ({ requests: [...s.requests.filter((x) => x.id !== r.id), r].slice(-5) })),
  remove: (id) => set((s) => ({ requests: s.requests.filter((x) => x.id !== id) })),
}));

export function attachScreenRequests(bridge: Bridge): () => void {
  const offs = [
    bridge.on('screenRequest', (r) => useScreenRequests.getState().add(r)),
    bridge.on('screenRequestDone', ({ id }) => useScreenRequests.getState().remove(id)),
  ];
  return () => {
    for (const off of offs) off();
  };
}

export const MAX_WIDTH = 1600;
/** Under the browser host's 1 MiB message, with room for the JSON around it. */
export const MAX_BASE64 = 900_000;

/** The size to draw a `width`×`height` frame at: at most `maxWidth` wide, aspect kept. */
export function scaledSize(width: number, height: number, maxWidth = MAX_WIDTH) {
  const scale = Math.min(1, maxWidth / Math.max(1, width));
  return {
    width: Math.max(1, Math.round(width * scale)),
    height: Math.max(1, Math.round(height * scale)),
  };
}
