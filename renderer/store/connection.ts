import { create } from 'zustand';
import type { ConnectionState, ConnectionView, ProfileKindView } from '../../app/contract/index.js';

interface ConnectionStore {
  connections: ConnectionView[];
  /** The connection kinds the agent holds (from the snapshot): what the form can add. */
  kinds: ProfileKindView[];
  replace(list: ConnectionView[], kinds?: ProfileKindView[]): void;
  upsert(view: ConnectionView): void;
  remove(id: string): void;
}

/** Replace the view with the same profile id in place, or append it. */
export function upsertConnection(list: ConnectionView[], view: ConnectionView): ConnectionView[] {
  const at = list.findIndex((c) => c.profile.id === view.profile.id);
  if (at < 0) return [...list, view];
  const next = list.slice();
  next[at] = view;
  return next;
}

/** A connection the core is running (trying, logged in, or waiting to retry). */
export function isLive(state: ConnectionState): boolean {
  return state.status !== 'idle' && state.status !== 'offline';
}

/** The spec of a kind, if the agent holds it. */
export function kindOf(kinds: ProfileKindView[], kind: string): ProfileKindView | undefined {
  return kinds.find((k) => k.kind === kind);
}

export function activeConnection(list: ConnectionView[]): ConnectionView | undefined {
  return list.find((c) => c.active);
}

export const useConnections = create<ConnectionStore>()((set) => ({
  connections: [],
  kinds: [],
  replace: (list, kinds) => set(kinds ? { connections: list, kinds } : { connections: list }),
  upsert: (view) => set((s) => ({ connections: upsertConnection(s.connections, view) })),
  remove: (id) => set((s) => ({ connections: s.connections.filter((c) => c.profile.id !== id) })),
}));
