import { create } from 'zustand';
import type { ChatItem } from '../../app/contract/index.js';

/** The core keeps 500; a little more here so nothing visible jumps while it trims. */
export const CHAT_LIMIT = 1000;

export interface Mood {
  emoji: string;
  at: number;
}

interface ChatStore {
  items: ChatItem[];
  /** The character's latest mood per connection id. */
  moods: Record<string, Mood>;
  replace(items: ChatItem[]): void;
  upsert(item: ChatItem): void;
  setMood(connection: string, emoji: string, at?: number): void;
}

/**
 * Items are sent whole on every change: replace the one with the same id where it is (the
 * streaming reply is usually last, so search from the end), or append a new one.
 */
export function upsertItem(items: ChatItem[], item: ChatItem, limit = CHAT_LIMIT): ChatItem[] {
  for (let i = items.length - 1; i >= 0; i--) {
    if (items[i]?.id === item.id) {
      const next = items.slice();
      next[i] = item;
      return next;
    }
  }
  const next = [...items, item];
  return next.length > limit ? next.slice(next.length - limit) : next;
}

/** The latest mood of each connection as the timeline tells it (for a snapshot). */
export function moodsOf(items: ChatItem[]): Record<string, Mood> {
  const out: Record<string, Mood> = {};
  for (const item of items)
    if (item.kind === 'assistant' && item.mood)
      out[item.connection] = { emoji: item.mood, at: item.at };
  return out;
}

export const useChat = create<ChatStore>()((set) => ({
  items: [],
  moods: {},
  replace: (items) => {
    const unique = new Map<string, ChatItem>();
    for (const item of items) unique.set(item.id, item);
    const list = [...unique.values()].slice(-CHAT_LIMIT);
    set({ items: list, moods: moodsOf(list) });
  },
  upsert: (item) =>
    set((s) => {
      const items = upsertItem(s.items, item);
      if (item.kind === 'assistant' && item.mood && s.moods[item.connection]?.emoji !== item.mood)
        return {
          items,
          moods: { ...s.moods, [item.connection]: { emoji: item.mood, at: Date.now() } },
        };
      return { items };
    }),
  setMood: (connection, emoji, at = Date.now()) =>
    set((s) => ({ moods: { ...s.moods, [connection]: { emoji, at } } })),
}));
