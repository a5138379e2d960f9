import { create } from 'zustand';
import type { NoticeWords } from '../../app/contract/index.js';

export type ToastLevel = 'info' | 'warn' | 'error' | 'success';

export interface Toast {
  id: number;
  level: ToastLevel;
  message: string;
  /** The name of the connection the notice is about. */
  connection?: string;
  /**
   * Words to show instead of `message`, translated when shown (`message` stays the technical
   * line: it is what repeats are recognised by).
   */
  words?: { key: 'chat.protocolToast'; params: { server: string } } | NoticeWords;
}

interface ToastStore {
  toasts: Toast[];
  push(toast: Omit<Toast, 'id'>): number;
  dismiss(id: number): void;
}

const MAX_TOASTS = 5;
let nextId = 1;

export const useToasts = create<ToastStore>()((set) => ({
  toasts: [],
  push: (toast) => {
    const id = nextId++;
    set((s) => {
      // The same sentence twice in a row (a flapping connection) shows once.
      const last = s.toasts[s.toasts.length - 1];
      if (last && last.message === toast.message && last.level === toast.level) return s;
      return { toasts: [...s.toasts, { ...toast, id }].slice(-MAX_TOASTS) };
    });
    return id;
  },
  dismiss: (id) => set((s) => ({ toasts: s.toasts.filter((t) => t.id !== id) })),
}));

export function toast(level: ToastLevel, message: string): void {
  useToasts.getState().push({ level, message });
}
