/** The page's one voice controller, on the real audio engine. */
import { AudioEngine } from '../../audio/engine.js';
import { VoiceController } from './controller.js';
import { shortcutHost, startShortcut } from './shortcut.js';

export const voice = new VoiceController(new AudioEngine());

// Electron: ask macOS for the microphone before the first capture, and the global push-to-talk
// shortcut (a toggle: Electron reports key-down only).
const agent = typeof window === 'undefined' ? undefined : window.agent;
if (agent?.askMicrophone) {
  const ask = agent.askMicrophone.bind(agent);
  voice.askMicrophone = () => ask();
}
const host = shortcutHost();
if (host) startShortcut(host, () => void voice.toggle());
