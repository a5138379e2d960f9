import { create } from 'zustand';
import type { PendingPrompt } from '../../app/contract/index.js';

interface PromptsStore {
  /** Oldest first: the modal shows the head; none is lost while others wait. */
  prompts: PendingPrompt[];
  replace(list: PendingPrompt[]): void;
  add(prompt: PendingPrompt): void;
  remove(id: string): void;
}

export function addPrompt(list: PendingPrompt[], prompt: PendingPrompt): PendingPrompt[] {
  const at = list.findIndex((p) => p.id === prompt.id);
  if (at < 0) return [...list, prompt];
  const next = list.slice();
  next[at] = prompt;
  return next;
}

export const usePrompts = create<PromptsStore>()((set) => ({
  prompts: [],
  replace: (list) => set({ prompts: list.reduce<PendingPrompt[]>(addPrompt, []) }),
  add: (prompt) => set((s) => ({ prompts: addPrompt(s.prompts, prompt) })),
  remove: (id) => set((s) => ({ prompts: s.prompts.filter((p) => p.id !== id) })),
}));
