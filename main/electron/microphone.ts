/**
 * macOS microphone access. On macOS the system asks the user once per app; Chromium's own
 * permission handler (window.ts) only covers our page. The renderer calls `agent:askMicrophone`
 * before it opens the microphone: on macOS this asks the system (one prompt at a time, and never
 * again once granted); on every other platform there is nothing to ask.
 */
import { systemPreferences } from 'electron';

export class MicrophoneAccess {
  private granted = false;
  private asking: Promise<boolean> | undefined;

  constructor(private readonly platform: NodeJS.Platform = process.platform) {}

  async ask(): Promise<boolean> {
    if (this.platform !== 'darwin') return true;
    if (this.granted) return true;
    this.asking ??= this.askSystem().finally(() => {
      this.asking = undefined;
    });
    return this.asking;
  }

  private async askSystem(): Promise<boolean> {
    const status = systemPreferences.getMediaAccessStatus('microphone');
    // Refused or restricted: macOS would not ask again; the user changes it in System Settings.
    if (status === 'denied' || status === 'restricted') return false;
    const ok = status === 'granted' || (await systemPreferences.askForMediaAccess('microphone'));
    this.granted = ok;
    return ok;
  }
}
