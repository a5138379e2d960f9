/**
 * Saying a reminder aloud in the window with the Web Speech API, where the system has a voice.
 * The core asks for this only when no connection can say it (Advent SPEAK is preferred).
 */

/** The part of `window.speechSynthesis` used here (tests pass their own). */
export interface SynthLike {
  getVoices(): { lang: string; name: string }[];
  speak(utterance: SpeechSynthesisUtterance): void;
}

function synth(): SynthLike | undefined {
  return typeof window !== 'undefined' && 'speechSynthesis' in window
    ? window.speechSynthesis
    : undefined;
}

/** Ask the browser to load its voices early: the first getVoices() is often still empty. */
export function warmUpVoices(s: SynthLike | undefined = synth()): void {
  s?.getVoices();
}

/**
 * Speak `text` with a voice for `lang` (or the default voice); false when this window has no
 * speech synthesis or no voice at all, so the caller shows the reminder only.
 */
export function speak(text: string, lang: string, s: SynthLike | undefined = synth()): boolean {
  if (!s || typeof SpeechSynthesisUtterance === 'undefined') return false;
  const voices = s.getVoices();
  if (voices.length === 0) return false;
  const utterance = new SpeechSynthesisUtterance(text);
  utterance.lang = lang;
  const prefix = lang.toLowerCase().split('-')[0]!;
  const voice = voices.find((v) => v.lang.toLowerCase().startsWith(prefix));
  if (voice) utterance.voice = voice as SpeechSynthesisVoice;
  s.speak(utterance);
  return true;
}
