import { create } from 'zustand';

/** idle → listening (mic open) → thinking (waiting for the reply) → speaking (reply playing). */
export type VoicePhase = 'idle' | 'listening' | 'thinking' | 'speaking';
export type VoiceProblem = 'denied' | 'missing' | 'unsupported' | 'failed';

interface VoiceStore {
  phase: VoicePhase;
  /** Input level 0 … 1 (RMS of the latest 20 ms, scaled for the meter). */
  level: number;
  problem: VoiceProblem | undefined;
  handsFree: boolean;
  setPhase(phase: VoicePhase): void;
  setLevel(level: number): void;
  setProblem(problem: VoiceProblem | undefined): void;
  setHandsFree(on: boolean): void;
}

export const useVoice = create<VoiceStore>()((set) => ({
  phase: 'idle',
  level: 0,
  problem: undefined,
  handsFree: false,
  setPhase: (phase) => set({ phase }),
  setLevel: (level) => set({ level }),
  setProblem: (problem) => set({ problem }),
  setHandsFree: (handsFree) => set({ handsFree }),
}));
