import { create } from 'zustand';
import type { SettingsView } from '../../app/contract/index.js';

interface SettingsStore {
  settings: SettingsView | undefined;
  replace(view: SettingsView): void;
}

export const useSettings = create<SettingsStore>()((set) => ({
  settings: undefined,
  replace: (view) => set({ settings: view }),
}));
