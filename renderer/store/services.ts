import { create } from 'zustand';
import type { ServiceView } from '../../app/contract/index.js';

interface ServicesStore {
  services: ServiceView[];
  replace(list: ServiceView[]): void;
}

export const useServices = create<ServicesStore>()((set) => ({
  services: [],
  replace: (list) => set({ services: list }),
}));
