/** The page's one voice controller, on the real audio engine. */
import { AudioEngine } from '../../audio/engine.js';
import { VoiceController } from './controller.js';

export const voice = new VoiceController(new AudioEngine());
