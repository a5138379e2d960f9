import i18next from 'i18next';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ReminderFired, ReminderView } from '../../app/contract/index.js';
import {
  attachReminders,
  onRing,
  ringSentence,
  useReminders,
} from '../../renderer/features/reminders/reminders.js';
import { type SynthLike, speakWith } from '../../renderer/features/reminders/speech.js';
import { scaledSize, MAX_WIDTH } from '../../renderer/features/screen/screen.js';
import { useScreenRequests, attachScreenRequests } from '../../renderer/features/screen/screen.js';
import { en } from '../../renderer/i18n/en.js';
import { zhCN } from '../../renderer/i18n/zh-CN.js';
import { useToasts } from '../../renderer/store/toasts.js';
import { fakeBridge } from './fake-bridge.js';

/** Node has no Web Speech API: a stand-in utterance that keeps what it was given. */
class Utterance {
  lang = '';
  voice: unknown = null;
  constructor(readonly text: string) {}
}
const speak = (text: string, lang: string, s: SynthLike) =>
  speakWith(s, (t) => new Utterance(t), text, lang);

beforeAll(async () => {
  await i18next.init({
    resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
    lng: 'en',
    interpolation: { escapeValue: false },
  });
});

beforeEach(() => {
  useToasts.setState({ toasts: [] });
  useReminders.setState({ list: [], loaded: false });
});

const reminder: ReminderView = {
  id: 'r-0123abcd',
  kind: 'reminder',
  text: 'stretch',
  dueAt: 1,
  createdAt: 0,
  state: 'fired',
  firedAt: 1,
  connection: { id: 'demo', name: 'Demo server' },
};

function synth(voices: { lang: string; name: string }[]) {
  const spoken: Utterance[] = [];
  const s: SynthLike = {
    getVoices: () => voices,
    speak: (u) => void spoken.push(u as unknown as Utterance),
  };
  return { s, spoken };
}

describe('a reminder rings in the window', () => {
  it('is spoken with a voice for the UI language when the core says the window speaks it', () => {
    const { s, spoken } = synth([
      { lang: 'de-DE', name: 'Anna' },
      { lang: 'en-US', name: 'Samantha' },
    ]);
    const fired: ReminderFired = { reminder, speech: 'window' };
    expect(onRing(fired, (text, lang) => speak(text, lang, s))).toBe(true);
    expect(spoken).toHaveLength(1);
    expect(spoken[0]).toMatchObject({
      text: 'Reminder: stretch',
      lang: 'en',
      voice: { name: 'Samantha' },
    });
    expect(useToasts.getState().toasts.map((t) => t.message)).toEqual(['⏰ Reminder: stretch']);
  });

  it('is only shown when a connection already speaks it, or when the system has no voice', () => {
    const { s, spoken } = synth([{ lang: 'en-US', name: 'Samantha' }]);
    expect(onRing({ reminder, speech: 'connection' }, (t, l) => speak(t, l, s))).toBe(false);
    expect(spoken).toEqual([]);
    const mute = synth([]);
    expect(
      onRing({ reminder: { ...reminder, text: 'drink water' }, speech: 'window' }, (t, l) =>
        speak(t, l, mute.s),
      ),
    ).toBe(false);
    expect(useToasts.getState().toasts).toHaveLength(2);
  });

  it('says timers and reminders in the UI language', async () => {
    expect(ringSentence({ kind: 'timer', text: '' })).toBe("Time's up");
    await i18next.changeLanguage('zh-CN');
    expect(ringSentence({ kind: 'timer', text: '泡茶' })).toBe('时间到：泡茶');
    await i18next.changeLanguage('en');
  });
});

describe('the reminder list and screen requests follow the core', () => {
  it('replaces the list on every reminders event', () => {
    const f = fakeBridge();
    const detach = attachReminders(f.bridge, () => false);
    f.emit('reminders', [{ ...reminder, state: 'pending' }]);
    expect(useReminders.getState()).toMatchObject({
      loaded: true,
      list: [{ id: 'r-0123abcd', state: 'pending' }],
    });
    detach();
    f.emit('reminders', []);
    expect(useReminders.getState().list).toHaveLength(1);
  });

  it('queues screen requests until the core says they are done', () => {
    const f = fakeBridge();
    attachScreenRequests(f.bridge);
    const connection = { id: 'p1', name: 'Home' };
    f.emit('screenRequest', { id: 's-1', connection, expiresAt: 1 });
    f.emit('screenRequest', { id: 's-2', connection, expiresAt: 2 });
    f.emit('screenRequestDone', { id: 's-1' });
    expect(useScreenRequests.getState().requests.map((r) => r.id)).toEqual(['s-2']);
  });

  it('scales a captured screen to at most 1600 px wide, keeping its shape', () => {
    expect(scaledSize(3840, 2160)).toEqual({ width: MAX_WIDTH, height: 900 });
    expect(scaledSize(800, 600)).toEqual({ width: 800, height: 600 });
  });
});
