import * as electronModule from 'electron';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentNotice } from '../../../app/contract/notice.js';
import {
  ASK_MICROPHONE_CHANNEL,
  type IpcHost,
  type IpcReply,
  SET_SHORTCUT_CHANNEL,
  SHORTCUT_CHANNEL,
  wireIpc,
} from '../../../main/electron/ipc.js';
import { MicrophoneAccess } from '../../../main/electron/microphone.js';
import {
  DEFAULT_SHORTCUT,
  PushToTalkShortcut,
  checkAccelerator,
  shortcutBackend,
  unconfirmedShortcutNotice,
} from '../../../main/electron/shortcut.js';
import * as rendererShortcut from '../../../renderer/features/voice/shortcut.js';
import { type FakeElectron, type FakeFrame, FakeBrowserWindow } from './fake-electron.js';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));
const electron = electronModule as unknown as FakeElectron;

const OWN = 'app://advent/index.html';

function eventFrom(url: string) {
  const frame: FakeFrame = { url, parent: null };
  return { sender: { mainFrame: frame }, senderFrame: frame };
}
const own = () => eventFrom(OWN);
const evil = () => eventFrom('https://evil.example/');

async function call(channel: string, event: unknown, ...args: unknown[]): Promise<IpcReply> {
  const fn = electron.ipcMain.handlers.get(channel);
  if (!fn) throw new Error(`no handler for ${channel}`);
  return (await fn(event, ...args)) as IpcReply;
}

/** The events channels are not exercised here: an api whose events go nowhere. */
const api = { events: { on: () => () => undefined } } as unknown as IpcHost['api'];

let win: FakeBrowserWindow;
let unwire: (() => void) | undefined;

let notices: AgentNotice[] = [];

function wire(
  platform: NodeJS.Platform = 'linux',
  shortcuts: IpcHost['shortcutBackend'] = 'system',
): () => void {
  unwire?.();
  unwire = wireIpc({
    api,
    getWindow: () => win as unknown as Electron.BrowserWindow,
    platform,
    shortcutBackend: shortcuts,
    notice: (notice) => notices.push(notice),
  });
  return unwire;
}

beforeEach(() => {
  unwire?.();
  unwire = undefined;
  notices = [];
  electron.globalShortcut.registered.clear();
  electron.globalShortcut.portalBindings.clear();
  electron.globalShortcut.taken.clear();
  electron.globalShortcut.mode = 'system';
  electron.globalShortcut.portalAccepts = false;
  electron.globalShortcut.register.mockClear();
  electron.globalShortcut.unregister.mockClear();
  electron.systemPreferences.mediaAccess = 'not-determined';
  electron.systemPreferences.askForMediaAccess.mockReset();
  electron.systemPreferences.askForMediaAccess.mockResolvedValue(true);
  electron.systemPreferences.getMediaAccessStatus.mockClear();
  win = new FakeBrowserWindow({});
  void win.loadURL(OWN);
  win.webContents.send.mockClear();
});

describe('checkAccelerator', () => {
  it.each([
    DEFAULT_SHORTCUT,
    'Alt+Space',
    'Ctrl+Shift+T',
    'CmdOrCtrl+Alt+Plus',
    'Shift+F5',
    'F13',
    'MediaPlayPause',
    'Super+num5',
    'Control+/',
  ])('accepts %s', (accel) => {
    expect(checkAccelerator(accel)).toEqual({ ok: true, accelerator: accel });
  });

  it.each([
    [42, /string/],
    ['', /empty/],
    ['   ', /characters/],
    ['Ctrl+'.repeat(20) + 'A', /at most/],
    ['Ctrl+Ä', /characters/],
    ['Ctrl+A\n', /characters/],
    ['Ctrl A', /characters/],
    ['Ctrl+Shift', /not a key/],
    ['Ctrl+Foo', /not a key/],
    ['Hyper+A', /not a modifier/],
    ['Ctrl+Ctrl+A', /twice/],
    ['A', /needs a modifier/],
    ['Space', /needs a modifier/],
    ['Ctrl++', /not a key/],
  ])('refuses %j', (accel, reason) => {
    const checked = checkAccelerator(accel);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason).toMatch(reason);
  });
});

describe('the renderer’s copy of the rule', () => {
  it('agrees with main on every case', () => {
    expect(rendererShortcut.DEFAULT_SHORTCUT).toBe(DEFAULT_SHORTCUT);
    const cases = [
      DEFAULT_SHORTCUT,
      'Alt+Space',
      'F13',
      'Shift+F5',
      'Super+num5',
      'Control+/',
      'MediaPlayPause',
      'CmdOrCtrl+Alt+Plus',
      '',
      ' ',
      'A',
      'Ctrl+',
      'Ctrl++',
      'Ctrl+Ä',
      'Ctrl A',
      'Hyper+A',
      'Ctrl+Ctrl+A',
      'Ctrl+Foo',
      `Ctrl+${'x'.repeat(80)}`,
      42,
      null,
    ];
    for (const c of cases)
      expect(rendererShortcut.checkAccelerator(c), String(c)).toEqual(checkAccelerator(c));
  });
});

describe('PushToTalkShortcut', () => {
  it('registers, re-registers (new before old is released) and clears', () => {
    const press = vi.fn();
    const s = new PushToTalkShortcut(press);
    expect(s.set(DEFAULT_SHORTCUT)).toEqual({
      ok: true,
      accelerator: DEFAULT_SHORTCUT,
      confirmed: true,
    });
    expect([...electron.globalShortcut.registered.keys()]).toEqual([DEFAULT_SHORTCUT]);
    // The same one again is a no-op.
    expect(s.set(DEFAULT_SHORTCUT)).toMatchObject({ ok: true, accelerator: DEFAULT_SHORTCUT });
    expect(electron.globalShortcut.register).toHaveBeenCalledTimes(1);

    expect(s.set('Alt+F9')).toMatchObject({ ok: true, accelerator: 'Alt+F9' });
    expect([...electron.globalShortcut.registered.keys()]).toEqual(['Alt+F9']);
    electron.globalShortcut.press('Alt+F9');
    expect(press).toHaveBeenCalledTimes(1);

    expect(s.set(null)).toMatchObject({ ok: true, accelerator: null });
    expect(electron.globalShortcut.registered.size).toBe(0);
    expect(s.accelerator).toBeNull();
  });

  it('a shortcut taken by another app fails and leaves the previous one working', () => {
    const s = new PushToTalkShortcut(() => undefined);
    s.set(DEFAULT_SHORTCUT);
    electron.globalShortcut.taken.add('Alt+Space');
    expect(s.set('Alt+Space')).toMatchObject({ ok: false, code: 'failed' });
    expect(s.accelerator).toBe(DEFAULT_SHORTCUT);
    expect([...electron.globalShortcut.registered.keys()]).toEqual([DEFAULT_SHORTCUT]);
  });

  it('an accelerator Electron throws on is refused as invalid', () => {
    electron.globalShortcut.register.mockImplementationOnce(() => {
      throw new Error('conversion failure');
    });
    const s = new PushToTalkShortcut(() => undefined);
    expect(s.set('Ctrl+Q')).toMatchObject({ ok: false, code: 'invalid_args' });
    expect(s.accelerator).toBeNull();
  });
});

describe('agent:setShortcut', () => {
  it('registers the accelerator and returns it; a press reaches the window on agent:shortcut', async () => {
    wire();
    expect(await call(SET_SHORTCUT_CHANNEL, own(), DEFAULT_SHORTCUT)).toEqual({
      ok: true,
      value: DEFAULT_SHORTCUT,
    });
    electron.globalShortcut.press(DEFAULT_SHORTCUT);
    expect(win.webContents.send).toHaveBeenCalledWith(SHORTCUT_CHANNEL, 'talk');
  });

  it('re-registers on change, and unregisters when unwired (on quit)', async () => {
    const dispose = wire();
    await call(SET_SHORTCUT_CHANNEL, own(), DEFAULT_SHORTCUT);
    expect(await call(SET_SHORTCUT_CHANNEL, own(), 'Alt+Shift+K')).toEqual({
      ok: true,
      value: 'Alt+Shift+K',
    });
    expect(electron.globalShortcut.unregister).toHaveBeenCalledWith(DEFAULT_SHORTCUT);
    expect([...electron.globalShortcut.registered.keys()]).toEqual(['Alt+Shift+K']);
    dispose();
    unwire = undefined;
    expect(electron.globalShortcut.unregister).toHaveBeenLastCalledWith('Alt+Shift+K');
    expect(electron.globalShortcut.registered.size).toBe(0);
    expect(electron.ipcMain.handlers.has(SET_SHORTCUT_CHANNEL)).toBe(false);
  });

  it('null turns the shortcut off', async () => {
    wire();
    await call(SET_SHORTCUT_CHANNEL, own(), DEFAULT_SHORTCUT);
    expect(await call(SET_SHORTCUT_CHANNEL, own(), null)).toEqual({ ok: true, value: null });
    expect(electron.globalShortcut.registered.size).toBe(0);
  });

  it('refuses an invalid accelerator as invalid_args without touching globalShortcut', async () => {
    wire();
    for (const bad of ['Ctrl+Ä', 'A', '', 7, { toString: () => 'Ctrl+A' }, 'x'.repeat(500)]) {
      expect(await call(SET_SHORTCUT_CHANNEL, own(), bad)).toMatchObject({
        ok: false,
        error: { code: 'invalid_args' },
      });
    }
    expect(electron.globalShortcut.register).not.toHaveBeenCalled();
  });

  it('says so when the shortcut is taken by another app', async () => {
    wire();
    electron.globalShortcut.taken.add('Ctrl+Alt+T');
    const reply = await call(SET_SHORTCUT_CHANNEL, own(), 'Ctrl+Alt+T');
    expect(reply).toMatchObject({
      ok: false,
      error: { code: 'failed', message: expect.stringMatching(/another app/) },
    });
  });

  it('refuses a foreign-origin sender', async () => {
    wire();
    expect(await call(SET_SHORTCUT_CHANNEL, evil(), DEFAULT_SHORTCUT)).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    expect(electron.globalShortcut.register).not.toHaveBeenCalled();
  });

  it('a press sends nothing to a window that left our origin or is gone', async () => {
    wire();
    await call(SET_SHORTCUT_CHANNEL, own(), DEFAULT_SHORTCUT);
    win.webContents.url = 'https://evil.example/';
    electron.globalShortcut.press(DEFAULT_SHORTCUT);
    win.webContents.url = OWN;
    win.destroyed = true;
    electron.globalShortcut.press(DEFAULT_SHORTCUT);
    expect(win.webContents.send).not.toHaveBeenCalled();
  });
});

describe('Wayland: the GlobalShortcuts portal', () => {
  // Electron ≥ 38 runs as a native Wayland client when XDG_SESSION_TYPE=wayland (electron/electron
  // #48301), and Chromium then binds global shortcuts through the XDG portal (GlobalShortcutsPortal
  // is on by default; electron.d.ts globalShortcut: "Chromium's GlobalShortcutsPortal
  // implementation ... allows apps to bind global shortcuts when running within a Wayland
  // session"). There register() returns true whatever the desktop decides.
  it('knows when shortcuts go through the portal', () => {
    expect(shortcutBackend('linux', { XDG_SESSION_TYPE: 'wayland' })).toBe('portal');
    expect(shortcutBackend('linux', { XDG_SESSION_TYPE: 'x11' })).toBe('system');
    expect(shortcutBackend('linux', {})).toBe('system');
    // Forced onto XWayland with --ozone-platform=x11: X11 grabs, real answers.
    expect(shortcutBackend('linux', { XDG_SESSION_TYPE: 'wayland' }, 'x11')).toBe('system');
    expect(shortcutBackend('linux', { XDG_SESSION_TYPE: 'x11' }, 'wayland')).toBe('portal');
    expect(shortcutBackend('win32', { XDG_SESSION_TYPE: 'wayland' })).toBe('system');
    expect(shortcutBackend('darwin', {})).toBe('system');
  });

  it('does not say "registered" when the desktop may have refused it: the user is told', async () => {
    electron.globalShortcut.mode = 'portal';
    // The portal rejected the binding (no valid desktop-file identity), yet register() is true.
    electron.globalShortcut.portalAccepts = false;
    wire('linux', 'portal');
    const reply = await call(SET_SHORTCUT_CHANNEL, own(), DEFAULT_SHORTCUT);
    // The renderer's contract is unchanged (the accelerator), and a notice tells the user.
    expect(reply).toEqual({ ok: true, value: DEFAULT_SHORTCUT });
    expect(notices).toEqual([unconfirmedShortcutNotice(DEFAULT_SHORTCUT)]);
    expect(notices[0]!.message).toMatch(/Wayland/);
    expect(notices[0]!.message).toContain(DEFAULT_SHORTCUT);
    // The window says it in the reader's language, naming the same shortcut.
    expect(notices[0]!.words).toEqual({
      key: 'notice.shortcutUnconfirmed',
      params: { shortcut: DEFAULT_SHORTCUT },
    });
    electron.globalShortcut.press(DEFAULT_SHORTCUT);
    expect(win.webContents.send).not.toHaveBeenCalled();
    // Setting the same shortcut again (every start) does not repeat the notice.
    await call(SET_SHORTCUT_CHANNEL, own(), DEFAULT_SHORTCUT);
    expect(notices).toHaveLength(1);
  });

  it('a key still bound by the portal after a change does nothing', async () => {
    electron.globalShortcut.mode = 'portal';
    electron.globalShortcut.portalAccepts = true;
    wire('linux', 'portal');
    await call(SET_SHORTCUT_CHANNEL, own(), DEFAULT_SHORTCUT);
    await call(SET_SHORTCUT_CHANNEL, own(), 'Alt+Shift+K');
    // Electron cannot unbind a portal shortcut (unregister() finds nothing to remove)…
    expect(electron.globalShortcut.portalBindings.has(DEFAULT_SHORTCUT)).toBe(true);
    electron.globalShortcut.press(DEFAULT_SHORTCUT);
    expect(win.webContents.send).not.toHaveBeenCalled();
    // …so only the current one talks; the notice named each new key.
    electron.globalShortcut.press('Alt+Shift+K');
    expect(win.webContents.send).toHaveBeenCalledTimes(1);
    expect(notices).toEqual([
      unconfirmedShortcutNotice(DEFAULT_SHORTCUT),
      unconfirmedShortcutNotice('Alt+Shift+K'),
    ]);
    // Turned off: presses of the old binding are ignored too.
    await call(SET_SHORTCUT_CHANNEL, own(), null);
    electron.globalShortcut.press('Alt+Shift+K');
    expect(win.webContents.send).toHaveBeenCalledTimes(1);
  });

  it('outside Wayland a registered shortcut is confirmed and nobody is bothered', async () => {
    wire('linux', 'system');
    await call(SET_SHORTCUT_CHANNEL, own(), DEFAULT_SHORTCUT);
    expect(notices).toEqual([]);
  });
});

describe('agent:askMicrophone', () => {
  it('on macOS asks the system once and returns its answer', async () => {
    wire('darwin');
    expect(await call(ASK_MICROPHONE_CHANNEL, own())).toEqual({ ok: true, value: true });
    expect(electron.systemPreferences.askForMediaAccess).toHaveBeenCalledWith('microphone');
    expect(await call(ASK_MICROPHONE_CHANNEL, own())).toEqual({ ok: true, value: true });
    expect(electron.systemPreferences.askForMediaAccess).toHaveBeenCalledTimes(1);
  });

  it('on macOS returns a refusal', async () => {
    electron.systemPreferences.askForMediaAccess.mockResolvedValue(false);
    wire('darwin');
    expect(await call(ASK_MICROPHONE_CHANNEL, own())).toEqual({ ok: true, value: false });
    // Once refused, macOS does not ask again: the status says so.
    electron.systemPreferences.mediaAccess = 'denied';
    expect(await call(ASK_MICROPHONE_CHANNEL, own())).toEqual({ ok: true, value: false });
    expect(electron.systemPreferences.askForMediaAccess).toHaveBeenCalledTimes(1);
  });

  it('on macOS does not ask when access is already granted', async () => {
    electron.systemPreferences.mediaAccess = 'granted';
    wire('darwin');
    expect(await call(ASK_MICROPHONE_CHANNEL, own())).toEqual({ ok: true, value: true });
    expect(electron.systemPreferences.askForMediaAccess).not.toHaveBeenCalled();
  });

  it.each(['linux', 'win32'] as const)('on %s never asks and returns true', async (platform) => {
    wire(platform);
    expect(await call(ASK_MICROPHONE_CHANNEL, own())).toEqual({ ok: true, value: true });
    expect(electron.systemPreferences.askForMediaAccess).not.toHaveBeenCalled();
    expect(electron.systemPreferences.getMediaAccessStatus).not.toHaveBeenCalled();
  });

  it('refuses a foreign-origin sender', async () => {
    wire('darwin');
    expect(await call(ASK_MICROPHONE_CHANNEL, evil())).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    expect(electron.systemPreferences.askForMediaAccess).not.toHaveBeenCalled();
  });

  it('two calls at once share one system prompt', async () => {
    let answer: (ok: boolean) => void = () => undefined;
    electron.systemPreferences.askForMediaAccess.mockImplementationOnce(
      () => new Promise<boolean>((r) => (answer = r)),
    );
    const mic = new MicrophoneAccess('darwin');
    const a = mic.ask();
    const b = mic.ask();
    await Promise.resolve();
    answer(true);
    expect(await Promise.all([a, b])).toEqual([true, true]);
    expect(electron.systemPreferences.askForMediaAccess).toHaveBeenCalledTimes(1);
  });
});
