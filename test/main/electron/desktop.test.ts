import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { EventPayloads } from '../../../app/contract/commands.js';
import type { ReminderView } from '../../../app/contract/reminders.js';
import { Emitter } from '../../../app/events.js';
import { MAX_CLIPBOARD_READ_BYTES } from '../../../app/services/platform/clipboard.js';
import { ServiceFailure } from '../../../app/services/service.js';
import {
  type CapturerLike,
  MAX_CAPTURE_WIDTH,
  clipboardStore,
  notifyReminders,
  reminderNotice,
  screenSource,
} from '../../../main/electron/desktop.js';
import { FakeNotification } from './fake-electron.js';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));

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

function thumbnail(width: number, height: number, empty = false) {
  return {
    isEmpty: () => empty,
    getSize: () => ({ width, height }),
    toJPEG: (q: number) => Buffer.from(`jpeg q${q} ${width}x${height}`),
  };
}

describe('reminder notifications in the desktop app', () => {
  beforeEach(() => {
    FakeNotification.instances = [];
    FakeNotification.supported = true;
  });

  it('shows one per reminder, in the app language; clicking it shows the window', () => {
    const events = new Emitter<EventPayloads>();
    const showWindow = vi.fn();
    let language = 'en';
    const stop = notifyReminders({ api: { events }, language: () => language, showWindow });
    events.emit('reminder', { reminder, speech: 'window' });
    language = 'zh-CN';
    events.emit('reminder', {
      reminder: { ...reminder, kind: 'timer', text: '' },
      speech: 'connection',
    });
    expect(FakeNotification.instances.map((n) => n.options)).toEqual([
      { title: 'Reminder', body: 'stretch' },
      { title: '时间到', body: '时间到' },
    ]);
    expect(FakeNotification.instances[0]!.show).toHaveBeenCalled();
    FakeNotification.instances[0]!.emit('click');
    expect(showWindow).toHaveBeenCalledTimes(1);
    stop();
    expect(FakeNotification.instances[1]!.close).toHaveBeenCalled();
    events.emit('reminder', { reminder, speech: 'window' });
    expect(FakeNotification.instances).toHaveLength(2);
  });

  it('says the words for each kind', () => {
    expect(
      reminderNotice(
        { reminder: { ...reminder, kind: 'timer', text: 'tea' }, speech: 'window' },
        'en',
      ),
    ).toEqual({
      title: "Time's up",
      body: 'tea',
    });
  });

  it('escapes the markup Linux notification servers would render from a server-written text', () => {
    const fired = {
      reminder: { ...reminder, text: '<a href="https://evil.example">pay</a> & <b' },
      speech: 'window' as const,
    };
    expect(reminderNotice(fired, 'en', 'linux').body).toBe(
      '&lt;a href="https://evil.example"&gt;pay&lt;/a&gt; &amp; &lt;b',
    );
    expect(reminderNotice(fired, 'en', 'darwin').body).toBe(fired.reminder.text);
  });
});

describe('screen capture with desktopCapturer (a stand-in)', () => {
  it('captures the primary display, scaled to at most 1600 px wide, as JPEG', async () => {
    const getSources = vi.fn(async () => [
      { display_id: '2', thumbnail: thumbnail(10, 10) },
      { display_id: '7', thumbnail: thumbnail(1600, 900) },
    ]);
    const capture = screenSource({ getSources } as CapturerLike, {
      getPrimaryDisplay: () => ({ id: 7, size: { width: 1920, height: 1080 }, scaleFactor: 2 }),
    });
    const image = await capture({
      connection: { id: 'x', name: 'x' },
      signal: new AbortController().signal,
    });
    expect(getSources).toHaveBeenCalledWith({
      types: ['screen'],
      thumbnailSize: { width: MAX_CAPTURE_WIDTH, height: 900 },
    });
    expect(image).toEqual({
      data: Buffer.from('jpeg q80 1600x900'),
      mimeType: 'image/jpeg',
      width: 1600,
      height: 900,
    });
  });

  it('an empty picture (macOS without Screen Recording permission) is a clear refusal', async () => {
    const capture = screenSource(
      {
        getSources: async () => [{ display_id: '1', thumbnail: thumbnail(0, 0, true) }],
      } as CapturerLike,
      {
        getPrimaryDisplay: () => ({ id: 1, size: { width: 800, height: 600 }, scaleFactor: 1 }),
      },
    );
    const err = await capture({
      connection: { id: 'x', name: 'x' },
      signal: new AbortController().signal,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceFailure);
    expect((err as ServiceFailure).message).toMatch(/Screen Recording/);
  });

  it("Electron's clipboard, sync or async, as the services' clipboard", async () => {
    let text = '';
    const sync = clipboardStore({ readText: () => text, writeText: (t) => void (text = t) });
    await sync.writeText('hello');
    expect(await sync.readText()).toBe('hello');
    const async = clipboardStore({
      readText: async () => 'later',
      writeText: async () => undefined,
    });
    expect(await async.readText()).toBe('later');
  });

  it("Electron's clipboard gives the services at most the command path's bound, never half a pair", async () => {
    const bound = MAX_CLIPBOARD_READ_BYTES; // in UTF-16 units here
    const huge = clipboardStore({
      readText: () => 'x'.repeat(64 * 1024 * 1024),
      writeText: () => undefined,
    });
    const read = await huge.readText();
    expect(read.length).toBe(bound);
    expect(read).toBe('x'.repeat(bound));
    // The pair 😀 straddles the bound: it is left out whole rather than cut in half.
    const straddling = clipboardStore({
      readText: async () => `${'x'.repeat(bound - 1)}😀 and more`,
      writeText: () => undefined,
    });
    const cut = await straddling.readText();
    expect(cut.length).toBe(bound - 1);
    expect(cut).toBe('x'.repeat(bound - 1));
    const fits = `${'x'.repeat(bound - 2)}😀`;
    const exact = clipboardStore({ readText: () => fits, writeText: () => undefined });
    expect(await exact.readText()).toBe(fits);
  });
});
