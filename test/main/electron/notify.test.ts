import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { EventPayloads } from '../../../app/contract/commands.js';
import type { PendingPrompt } from '../../../app/contract/policy.js';
import { Emitter } from '../../../app/events.js';
import { notificationBody, notifyPrompts, promptTitle } from '../../../main/electron/notify.js';
import { FakeBrowserWindow, FakeNotification, fakeEvent } from './fake-electron.js';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));

const PROMPT: PendingPrompt = {
  id: 'p1',
  connection: { id: 'p-home', name: 'Home server' },
  service: 'create_file',
  grantKey: 'create_file',
  params: { path: 'notes/todo.txt' },
  summary: 'Create file notes/todo.txt (12 B) in ~/Documents/Advent Agent',
  resolvedPaths: [],
  expiresAt: Date.now() + 60_000,
};

let events: Emitter<EventPayloads>;
let win: FakeBrowserWindow;
let showWindow: ReturnType<typeof vi.fn<() => void>>;
let stop: () => void;
let warn: ReturnType<typeof vi.fn<(message: string) => void>>;

beforeEach(() => {
  FakeNotification.instances = [];
  FakeNotification.supported = true;
  events = new Emitter<EventPayloads>();
  win = new FakeBrowserWindow({});
  showWindow = vi.fn<() => void>(() => {
    win.show();
    win.focus();
  });
  warn = vi.fn<(message: string) => void>();
  stop = notifyPrompts({ api: { events } as never, getWindow: () => win, showWindow, warn });
});

describe('prompt notifications', () => {
  it('names who wants to run what', () => {
    expect(promptTitle(PROMPT)).toBe('Home server wants to run create_file');
  });

  it('notifies and brings the window forward when a prompt arrives while hidden', () => {
    win.visible = false;
    events.emit('prompt', PROMPT);
    expect(FakeNotification.instances).toHaveLength(1);
    const note = FakeNotification.instances[0];
    expect(note?.options).toMatchObject({
      title: 'Home server wants to run create_file',
      body: PROMPT.summary,
    });
    expect(note?.show).toHaveBeenCalled();
    expect(showWindow).toHaveBeenCalledTimes(1);
    expect(win.visible && win.focused).toBe(true);
  });

  it("shows a server's markup in the body as text where the daemon would read it (Linux)", () => {
    const sneaky = '<b>OK</b> <a href="https://x.example">details</a> & more';
    expect(notificationBody(sneaky, 'linux')).toBe(
      '&lt;b&gt;OK&lt;/b&gt; &lt;a href="https://x.example"&gt;details&lt;/a&gt; &amp; more',
    );
    expect(notificationBody(sneaky, 'darwin')).toBe(sneaky);
    win.visible = false;
    events.emit('prompt', { ...PROMPT, summary: sneaky });
    const { body } = FakeNotification.instances[0]!.options as { body: string };
    expect(body).toBe(notificationBody(sneaky));
  });

  it('clicking the notification focuses the window again', () => {
    win.visible = false;
    events.emit('prompt', PROMPT);
    win.focused = false;
    FakeNotification.instances[0]?.emit('click');
    expect(showWindow).toHaveBeenCalledTimes(2);
    expect(win.focused).toBe(true);
  });

  it('notifies when the window is visible but in the background or minimised', () => {
    win.visible = true;
    win.focused = false;
    events.emit('prompt', PROMPT);
    win.focused = true;
    win.minimized = true;
    events.emit('prompt', { ...PROMPT, id: 'p2' });
    expect(FakeNotification.instances).toHaveLength(2);
  });

  it('does nothing when the user is already looking at the window', () => {
    win.visible = true;
    win.focused = true;
    events.emit('prompt', PROMPT);
    expect(FakeNotification.instances).toHaveLength(0);
    expect(showWindow).not.toHaveBeenCalled();
  });

  it('still raises the window where notifications are unsupported', () => {
    FakeNotification.supported = false;
    win.visible = false;
    events.emit('prompt', PROMPT);
    expect(FakeNotification.instances).toHaveLength(0);
    expect(showWindow).toHaveBeenCalled();
  });

  it('withdraws the notification once the prompt is answered, and on stop', () => {
    win.visible = false;
    events.emit('prompt', PROMPT);
    events.emit('promptResolved', { id: 'p1', resolution: 'once' });
    expect(FakeNotification.instances[0]?.close).toHaveBeenCalled();
    win.hide();
    events.emit('prompt', { ...PROMPT, id: 'p3' });
    stop();
    expect(FakeNotification.instances[1]?.close).toHaveBeenCalled();
    win.hide();
    events.emit('prompt', { ...PROMPT, id: 'p4' });
    expect(FakeNotification.instances).toHaveLength(2);
  });

  it('falls back to the window, logged once, where the notification fails (unsigned macOS)', () => {
    // notification.md, event 'failed' (macOS, Windows): "Emitted when an error is encountered
    // while creating and showing the native notification."
    win.visible = false;
    events.emit('prompt', PROMPT);
    win.hide();
    win.focused = false;
    FakeNotification.instances[0]?.emit('failed', fakeEvent(), 'Notifications are not authorized');
    expect(win.visible && win.focused).toBe(true);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[0]).toMatch(/Notifications are not authorized/);
    // Later prompts go straight to the window, with no new log line.
    win.hide();
    events.emit('prompt', { ...PROMPT, id: 'p2' });
    expect(FakeNotification.instances).toHaveLength(1);
    expect(win.visible).toBe(true);
    expect(warn).toHaveBeenCalledTimes(1);
  });
});
