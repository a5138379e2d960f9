/** The window's own voice: the Web Speech API where this browser has it. */
import { type Speaker, speakWith } from './speech.js';

const synth = (): SpeechSynthesis | undefined =>
  typeof window !== 'undefined' && 'speechSynthesis' in window ? window.speechSynthesis : undefined;

export const windowSpeaker: Speaker = (text, lang) =>
  speakWith(
    synth(),
    typeof SpeechSynthesisUtterance === 'undefined'
      ? undefined
      : (t) => new SpeechSynthesisUtterance(t),
    text,
    lang,
  );

/** Ask the browser to load its voices early: the first getVoices() is often still empty. */
export function warmUpVoices(): void {
  synth()?.getVoices();
}
