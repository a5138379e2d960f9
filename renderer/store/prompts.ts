import { create } from 'zustand';
import type { PendingPrompt } from '../../app/contract/index.js';

interface PromptsStore {
  /** Oldest first: the modal shows the head; none is lost while others wait. */
  prompts: PendingPrompt[];
  /**
   * Prompts their server took back (it stopped waiting) and the user has not been told of yet:
   * the modal's host tells them in words, then clears this.
   */
  withdrawn: PendingPrompt[];
  replace(list: PendingPrompt[]): void;
  add(prompt: PendingPrompt): void;
  remove(id: string): void;
  /** The server stopped waiting: the prompt goes, and a notice is owed. */
  withdraw(id: string): void;
  clearWithdrawn(): void;
}

/** Notices owed at once, at most (a server dropping many calls gets one line per call up to this). */
const MAX_WITHDRAWN = 5;

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
  withdrawn: [],
  withdraw: (id) =>
    set((s) => {
      const gone = s.prompts.find((p) => p.id === id);
      if (!gone) return s;
      return {
        prompts: s.prompts.filter((p) => p.id !== id),
        withdrawn: [...s.withdrawn, gone].slice(-MAX_WITHDRAWN),
      };
    }),
  clearWithdrawn: () => set({ withdrawn: [] }),
}));
