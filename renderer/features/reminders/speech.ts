/**
 * Saying a reminder aloud with the Web Speech API, where the system has a voice. Written against
 * the shapes it uses (not the DOM types), so it is tested with stand-ins; window-speech.ts binds
 * it to the window.
 */

export interface VoiceLike {
  lang: string;
  name: string;
}

export interface UtteranceLike {
  lang: string;
  voice: unknown;
}

/** The part of `window.speechSynthesis` used here. */
export interface SynthLike {
  getVoices(): VoiceLike[];
  speak(utterance: never): void;
}

export type Speaker = (text: string, lang: string) => boolean;

/**
 * Speak `text` with a voice for `lang` (or the default voice); false when there is no speech
 * synthesis or no voice at all, so the caller only shows the reminder.
 */
export function speakWith(
  synth: SynthLike | undefined,
  utterance: ((text: string) => UtteranceLike) | undefined,
  text: string,
  lang: string,
): boolean {
  if (!synth || !utterance) return false;
  const voices = synth.getVoices();
  if (voices.length === 0) return false;
  const u = utterance(text);
  u.lang = lang;
  const prefix = lang.toLowerCase().split('-')[0]!;
  const voice = voices.find((v) => v.lang.toLowerCase().startsWith(prefix));
  try {
    if (voice) u.voice = voice;
  } catch {
    // Not one of this browser's own voice objects: the language alone picks the voice.
  }
  (synth.speak as (u: UtteranceLike) => void)(u);
  return true;
}
