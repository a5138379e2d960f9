/**
 * The "detect speech on this computer" setting (remembered in this browser, like the devices):
 * on, it lets the voice controller end a push-to-talk turn when the local VAD hears the user stop.
 * Turning it on loads the model first; when the model cannot load, here or during a turn, the
 * setting turns itself off and keeps the reason for Settings (and, once, for the mic button).
 */
import { create } from 'zustand';
import { type VoiceEngine, devicePrefs } from '../../audio/shared.js';

interface LocalVadStore {
  on: boolean;
  /** The model is loading (Settings turned it on). */
  loading: boolean;
  /** Why it turned itself off; cleared when it is turned on again. */
  error: string | undefined;
  /** It failed during a turn: the mic button says so until the next turn. */
  notice: boolean;
}

export const useLocalVad = create<LocalVadStore>()(() => ({
  on: devicePrefs.localVad(),
  loading: false,
  error: undefined,
  notice: false,
}));

/** Turn it off because the detector cannot run, keeping `reason` to show. */
export function localVadFailed(reason: string, duringTurn = false): void {
  devicePrefs.setLocalVad(false);
  // The messages around it punctuate: no trailing full stop of its own.
  const error = reason.trim().replace(/[.\s]+$/, '') || 'unknown error';
  useLocalVad.setState({ on: false, loading: false, error, notice: duringTurn });
}

/** Settings' switch: on loads the model (and stays off, with the reason, if it cannot). */
export async function setLocalVad(engine: VoiceEngine, on: boolean): Promise<void> {
  if (!on) {
    devicePrefs.setLocalVad(false);
    useLocalVad.setState({ on: false, loading: false, error: undefined, notice: false });
    return;
  }
  if (useLocalVad.getState().loading) return;
  if (!engine.loadSpeechDetector) {
    localVadFailed('not available in this window');
    return;
  }
  useLocalVad.setState({ loading: true, error: undefined, notice: false });
  const r = await engine.loadSpeechDetector().catch((err: unknown) => ({
    ok: false as const,
    error: err instanceof Error ? err.message : String(err),
  }));
  if (!r.ok) {
    localVadFailed(r.error);
    return;
  }
  devicePrefs.setLocalVad(true);
  useLocalVad.setState({ on: true, loading: false, error: undefined });
}
