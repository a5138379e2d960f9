import * as electronModule from 'electron';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CoreApi } from '../../../app/api.js';
import {
  APP_USER_MODEL_ID,
  type Host,
  type HostOptions,
  appUserModelId,
  startHost,
} from '../../../main/electron/host.js';
import { SafeStorageSecretStore } from '../../../main/electron/secrets.js';
import {
  type FakeElectron,
  FakeBrowserWindow,
  FakeTray,
  type fakeElectronLog,
  fakeEvent,
} from './fake-electron.js';
import * as logModule from 'electron-log/main';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));
vi.mock('electron-log/main', () => import('./fake-electron.js').then((m) => m.fakeElectronLog()));
const electron = electronModule as unknown as FakeElectron;
const fakeLog = logModule as unknown as ReturnType<typeof fakeElectronLog>;

// Each test starts its own host in its own folders, as one launch of the app.
let dir: string;
let savedXdg: string | undefined;
let started: Host | undefined;
const paths = {
  preload: '/app/dist/preload/preload.js',
  renderer: '/app/dist/renderer',
  resources: path.resolve('resources'),
};
const dataDir = (): string => path.join(dir, 'xdg', 'advent-agent');

function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open: (value: T) => void = () => undefined;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

async function start(options: HostOptions = { platform: 'linux' }): Promise<Host> {
  const host = await startHost(paths, options);
  if (!host) throw new Error('the host did not start');
  started = host;
  return host;
}

function theWindow(): FakeBrowserWindow {
  const win = FakeBrowserWindow.instances.at(-1);
  if (!win) throw new Error('no window');
  return win;
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-host-life-'));
  electron.app.paths = { userData: path.join(dir, 'userData'), logs: path.join(dir, 'logs') };
  savedXdg = process.env.XDG_DATA_HOME;
  process.env.XDG_DATA_HOME = path.join(dir, 'xdg');
  // A fresh app: no listeners, not ready, not quitting.
  electron.app.removeAllListeners();
  Object.assign(electron.app, { ready: false, quitting: false, quitted: false, isPackaged: false });
  electron.app.quit.mockClear();
  electron.ipcMain.handlers.clear();
  electron.Menu.setApplicationMenu.mockClear();
  electron.protocol.handle.mockClear();
  FakeBrowserWindow.instances = [];
  FakeBrowserWindow.failingLoads.clear();
  FakeTray.instances = [];
  fakeLog.written.length = 0;
  started = undefined;
});

afterEach(async () => {
  vi.restoreAllMocks();
  await started?.api.close().catch(() => undefined);
  if (savedXdg === undefined) delete process.env.XDG_DATA_HOME;
  else process.env.XDG_DATA_HOME = savedXdg;
  await rm(dir, { recursive: true, force: true });
});

describe('closing the window', () => {
  it('on Linux quits cleanly by default: the tray icon may not be there to bring it back', async () => {
    // GNOME without the AppIndicator extension: `new Tray()` succeeds and shows nothing.
    const host = await start({ platform: 'linux' });
    const close = vi.spyOn(host.api, 'close');
    expect(FakeTray.instances).toHaveLength(1);
    theWindow().close();
    expect(theWindow().isDestroyed()).toBe(true);
    // window-all-closed → app.quit() → before-quit → the goodbye → the real quit.
    await vi.waitFor(() => expect(electron.app.quitted).toBe(true));
    expect(close).toHaveBeenCalledTimes(1);
  });

  it('on Windows hides to the tray by default', async () => {
    const host = await start({ platform: 'win32' });
    const win = theWindow();
    win.show();
    win.close();
    expect(win.isDestroyed()).toBe(false);
    expect(win.isVisible()).toBe(false);
    expect(electron.app.quit).not.toHaveBeenCalled();
    expect(host.tray()?.label).toBe('Offline');
    expect(FakeTray.instances[0]?.item('keepInTray').checked).toBe(true);
  });

  it('remembers the tray choice for the next launch', async () => {
    await start({ platform: 'linux' });
    FakeTray.instances[0]?.click('keepInTray');
    const file = path.join(dir, 'userData', 'host-prefs.json');
    await vi.waitFor(async () =>
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ keepInTray: true }),
    );
    const win = theWindow();
    win.close();
    expect(win.isDestroyed()).toBe(false);
  });
});

describe('Windows ending the session', () => {
  // app.md, before-quit: "On Windows, this event will not be emitted if the app is closed due to a
  // shutdown/restart of the system or a user logout." The window gets query-session-end (the
  // session is about to end) and session-end (it ends; nothing can stop it) instead.
  it.each(['query-session-end', 'session-end'])(
    '%s starts the clean shutdown without any before-quit',
    async (eventName) => {
      const host = await start({ platform: 'win32' });
      const close = vi.spyOn(host.api, 'close');
      const beforeQuit = vi.fn();
      electron.app.on('before-quit', beforeQuit);
      theWindow().emit(eventName, Object.assign(fakeEvent(), { reasons: ['logoff'] }));
      await vi.waitFor(() => expect(close).toHaveBeenCalledTimes(1));
      // Nothing is prevented: Windows' decision to end the session is respected.
      await vi.waitFor(() => expect(electron.app.quitted).toBe(true));
      expect(JSON.stringify(fakeLog.written)).toContain('Windows is ending the session (logoff)');
      // Only the quit the host itself issued after saying goodbye.
      expect(beforeQuit).toHaveBeenCalledTimes(1);
    },
  );
});

describe('a quit during the start', () => {
  it('while waiting for ready: nothing opens', async () => {
    const ready = gate();
    electron.app.whenReady.mockImplementationOnce(async () => {
      await ready.promise;
      electron.app.ready = true;
    });
    const open = vi.spyOn(CoreApi, 'open');
    const starting = startHost(paths, { platform: 'linux' });
    electron.app.quit();
    ready.open();
    expect(await starting).toBeUndefined();
    expect(open).not.toHaveBeenCalled();
    expect(FakeBrowserWindow.instances).toHaveLength(0);
    expect(electron.protocol.handle).not.toHaveBeenCalledWith('app', expect.anything());
    expect(electron.app.quitted).toBe(true);
  });

  it('while the secret store opens: the core never opens', async () => {
    const secretsOpened = gate<SafeStorageSecretStore>();
    const realOpen = SafeStorageSecretStore.open.bind(SafeStorageSecretStore);
    vi.spyOn(SafeStorageSecretStore, 'open').mockImplementationOnce(async (file, options) => {
      const store = await realOpen(file, options);
      return secretsOpened.promise.then(() => store);
    });
    const open = vi.spyOn(CoreApi, 'open');
    const starting = startHost(paths, { platform: 'linux' });
    await vi.waitFor(() => expect(SafeStorageSecretStore.open).toHaveBeenCalled());
    electron.app.quit();
    secretsOpened.open(undefined as never);
    expect(await starting).toBeUndefined();
    expect(open).not.toHaveBeenCalled();
    expect(FakeBrowserWindow.instances).toHaveLength(0);
    expect(existsSync(path.join(dataDir(), 'agent.lock'))).toBe(false);
    await vi.waitFor(() => expect(electron.app.quitted).toBe(true));
  });

  it('while the core opens: it is closed again and no window opens', async () => {
    const coreOpened = gate();
    const realOpen = CoreApi.open.bind(CoreApi);
    let opened: CoreApi | undefined;
    vi.spyOn(CoreApi, 'open').mockImplementationOnce(async (options) => {
      opened = await realOpen(options);
      await coreOpened.promise;
      return opened;
    });
    const starting = startHost(paths, { platform: 'linux' });
    await vi.waitFor(() => expect(opened).toBeDefined());
    const close = vi.spyOn(opened as CoreApi, 'close');
    electron.app.quit();
    coreOpened.open();
    expect(await starting).toBeUndefined();
    await vi.waitFor(() => expect(electron.app.quitted).toBe(true));
    expect(close).toHaveBeenCalledTimes(1);
    expect(FakeBrowserWindow.instances).toHaveLength(0);
    // The data folder is free for the next launch.
    expect(existsSync(path.join(dataDir(), 'agent.lock'))).toBe(false);
  });

  it('a second launch during the start is not dropped: the window comes forward', async () => {
    const ready = gate();
    electron.app.whenReady.mockImplementationOnce(async () => {
      await ready.promise;
      electron.app.ready = true;
    });
    const starting = startHost(paths, { platform: 'linux' });
    electron.app.emit('second-instance', fakeEvent(), [], '/');
    ready.open();
    started = await starting;
    const win = theWindow();
    // Without waiting for ready-to-show: the user asked for it.
    expect(win.isVisible()).toBe(true);
    expect(win.isFocused()).toBe(true);
  });
});

describe('a window that cannot load', () => {
  it('shows an error page with the reason instead of staying hidden', async () => {
    FakeBrowserWindow.failingLoads.set('app://advent/', {
      errorCode: -6,
      errorName: 'ERR_FILE_NOT_FOUND',
    });
    await start({ platform: 'linux' });
    const win = theWindow();
    await vi.waitFor(() => expect(win.isVisible()).toBe(true));
    expect(win.loadedUrl).toMatch(/^data:text\/html;charset=utf-8,/);
    const page = decodeURIComponent(win.loadedUrl?.split(',')[1] ?? '');
    expect(page).toContain('ERR_FILE_NOT_FOUND');
    expect(page).toContain(path.join(dir, 'logs', 'main.log'));
    expect(JSON.stringify(fakeLog.written)).toContain('the window could not load the app');
  });
});

describe('a packaged build', () => {
  it('replaces the default menu (Reload, Toggle DevTools) and uses the installer’s AppUserModelID', async () => {
    electron.app.isPackaged = true;
    await start({ platform: 'win32' });
    expect(electron.Menu.setApplicationMenu).toHaveBeenCalledTimes(1);
    expect(electron.app.setAppUserModelId).toHaveBeenLastCalledWith(APP_USER_MODEL_ID);
  });

  it('the AppUserModelID is electron-builder’s appId, the one its Start-menu shortcut carries', async () => {
    const yml = await readFile(path.resolve('electron-builder.yml'), 'utf8');
    expect(yml).toMatch(new RegExp(`^appId: ${APP_USER_MODEL_ID.replace(/\./g, '\\.')}$`, 'm'));
    expect(appUserModelId(true, 'C:\\x\\electron.exe')).toBe(APP_USER_MODEL_ID);
    expect(appUserModelId(false, 'C:\\x\\electron.exe')).toBe('C:\\x\\electron.exe');
  });
});
