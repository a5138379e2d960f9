/**
 * The reminder list for the Reminders page, kept from the core's `reminders` events (and loaded
 * whenever the bridge is ready), and what the window does when one rings: a toast on any page,
 * and the sentence spoken with the Web Speech API when the core says no connection speaks it.
 */
import { create } from 'zustand';
import type { ReminderFired, ReminderView } from '../../../app/contract/index.js';
import type { Bridge } from '../../bridge/types.js';
import i18n from 'i18next';
import { toast } from '../../store/toasts.js';
import type { Speaker } from './speech.js';

interface RemindersStore {
  list: ReminderView[];
  loaded: boolean;
  replace(list: ReminderView[]): void;
}

export const useReminders = create<RemindersStore>()((set) => ({
  list: [],
  loaded: false,
  replace: (list) => set({ list, loaded: true }),
}));

/** The sentence said and shown when a reminder rings, in the UI's language. */
export function ringSentence(r: Pick<ReminderView, 'kind' | 'text'>): string {
  if (r.kind === 'timer')
    return r.text
      ? i18n.t('reminders.ring.timer', { text: r.text })
      : i18n.t('reminders.ring.timerPlain');
  return i18n.t('reminders.ring.reminder', { text: r.text });
}

/** What the window does when a reminder rings; returns whether it spoke. */
export function onRing(fired: ReminderFired, say: Speaker): boolean {
  const sentence = ringSentence(fired.reminder);
  toast('info', `⏰ ${sentence}`);
  if (fired.speech !== 'window') return false;
  return say(sentence, i18n.language);
}

export function attachReminders(bridge: Bridge, say: Speaker): () => void {
  const load = () =>
    void bridge.invoke('listReminders').then(
      (list) => useReminders.getState().replace(list),
      () => undefined,
    );
  const offs = [
    bridge.onReady(load),
    bridge.on('reminders', (list) => useReminders.getState().replace(list)),
    bridge.on('reminder', (fired) => void onRing(fired, say)),
  ];
  return () => {
    for (const off of offs) off();
  };
}
