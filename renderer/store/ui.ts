import { create } from 'zustand';
import type { BridgeStatus } from '../bridge/types.js';

export const PAGES = [
  'chat',
  'services',
  'reminders',
  'mcp',
  'activity',
  'connections',
  'settings',
] as const;
export type Page = (typeof PAGES)[number];

export function isPage(value: string): value is Page {
  return (PAGES as readonly string[]).includes(value);
}

/** What "audit #N" in the chat asks the Activity page to show. */
export interface AuditFocus {
  seq: number;
  service?: string;
  callId?: string;
}

interface UiStore {
  page: Page;
  bridgeStatus: BridgeStatus;
  /** True once the first snapshot arrived (until then pages show a quiet loading state). */
  ready: boolean;
  auditFocus: AuditFocus | undefined;
  /** The connections page opens its form for a new profile (from the welcome panel). */
  newProfileRequested: boolean;
  go(page: Page): void;
  setBridgeStatus(status: BridgeStatus): void;
  setReady(): void;
  openAudit(focus: AuditFocus): void;
  clearAuditFocus(): void;
  requestNewProfile(): void;
  clearNewProfileRequest(): void;
}

export const useUi = create<UiStore>()((set) => ({
  page: 'chat',
  bridgeStatus: 'connecting',
  ready: false,
  auditFocus: undefined,
  newProfileRequested: false,
  go: (page) => set({ page }),
  setBridgeStatus: (bridgeStatus) => set({ bridgeStatus }),
  setReady: () => set({ ready: true }),
  openAudit: (auditFocus) => set({ auditFocus, page: 'activity' }),
  clearAuditFocus: () => set({ auditFocus: undefined }),
  requestNewProfile: () => set({ newProfileRequested: true, page: 'connections' }),
  clearNewProfileRequest: () => set({ newProfileRequested: false }),
}));
