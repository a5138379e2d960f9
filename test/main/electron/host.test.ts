import * as electronModule from 'electron';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { IpcReply } from '../../../main/electron/ipc.js';
import { type Host, startHost } from '../../../main/electron/host.js';
import { hostPaths, trayIconPath } from '../../../main/electron/paths.js';
import {
  type FakeElectron,
  FakeBrowserWindow,
  FakeNotification,
  FakeTray,
  FakeWebContents,
  fakeEvent,
} from './fake-electron.js';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));
vi.mock('electron-log/main', () => import('./fake-electron.js').then((m) => m.fakeElectronLog()));
const electron = electronModule as unknown as FakeElectron;

const OWN = 'app://advent/index.html';
let dir: string;
let host: Host;
const paths = {
  preload: '/app/dist/preload/preload.js',
  renderer: '/app/dist/renderer',
  resources: path.resolve('resources'),
};

function invoke(method: string, ...args: unknown[]): Promise<IpcReply> {
  const handler = electron.ipcMain.handlers.get('agent:invoke');
  if (!handler) throw new Error('agent:invoke is not handled');
  const frame = { url: OWN, parent: null };
  return handler(
    { sender: { mainFrame: frame }, senderFrame: frame },
    method,
    ...args,
  ) as Promise<IpcReply>;
}

function mainWindow(): FakeBrowserWindow {
  const win = host.window() as unknown as FakeBrowserWindow | undefined;
  if (!win) throw new Error('no window');
  return win;
}

let savedXdg: string | undefined;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-host-'));
  electron.app.paths = { userData: path.join(dir, 'userData'), logs: path.join(dir, 'logs') };
  // The desktop app shares the platform data folder with the other hosts: keep it in the temp dir.
  savedXdg = process.env.XDG_DATA_HOME;
  process.env.XDG_DATA_HOME = path.join(dir, 'xdg');
});

afterAll(async () => {
  // Normally closed by the quit test; a second close is harmless.
  await host?.api.close().catch(() => undefined);
  if (savedXdg === undefined) delete process.env.XDG_DATA_HOME;
  else process.env.XDG_DATA_HOME = savedXdg;
  await rm(dir, { recursive: true, force: true });
});

describe('the Electron host', () => {
  it('a second instance quits at once and opens nothing', async () => {
    electron.app.requestSingleInstanceLock.mockReturnValueOnce(false);
    expect(await startHost(paths)).toBeUndefined();
    expect(electron.app.quit).toHaveBeenCalledTimes(1);
    expect(electron.app.enableSandbox).not.toHaveBeenCalled();
    expect(FakeBrowserWindow.instances).toHaveLength(0);
    electron.app.quit.mockClear();
    electron.app.quitted = false;
  });

  it('starts sandboxed, serves app://, hardens the session and opens the window', async () => {
    const started = await startHost(paths);
    if (!started) throw new Error('the host did not start');
    host = started;
    expect(electron.app.enableSandbox).toHaveBeenCalled();
    expect(electron.protocol.registerSchemesAsPrivileged).toHaveBeenCalled();
    expect(electron.protocol.handle).toHaveBeenCalledWith('app', expect.any(Function));
    expect(electron.session.defaultSession.setPermissionRequestHandler).toHaveBeenCalled();
    expect(electron.session.defaultSession.setPermissionCheckHandler).toHaveBeenCalled();
    const win = mainWindow();
    expect(win.options).toMatchObject({
      webPreferences: {
        preload: paths.preload,
        sandbox: true,
        contextIsolation: true,
        nodeIntegration: false,
      },
    });
    expect(win.loadedUrl).toBe(OWN);
    expect(FakeTray.instances).toHaveLength(1);
    // Unpackaged (`npm start`): toasts need electron.exe's own AppUserModelID (notifications.md),
    // and Electron's default menu (Reload, DevTools) stays for development.
    expect(electron.app.setAppUserModelId).toHaveBeenCalledWith(process.execPath);
    expect(electron.Menu.setApplicationMenu).not.toHaveBeenCalled();
  });

  it('hardens every web contents the app creates', () => {
    const contents = new FakeWebContents();
    electron.app.emit('web-contents-created', {}, contents);
    const away = fakeEvent('https://evil.example/');
    contents.emit('will-navigate', away);
    expect(away.defaultPrevented).toBe(true);
    expect(contents.windowOpenHandler?.({ url: 'https://x.example/' })).toEqual({ action: 'deny' });
  });

  it('answers contract calls from the window with the core opened for Electron', async () => {
    const reply = await invoke('snapshot');
    expect(reply).toMatchObject({
      ok: true,
      value: {
        version: '0.1.0-test',
        settings: {
          host: 'electron',
          dataDir: path.join(dir, 'xdg', 'advent-agent'),
          logDir: path.join(dir, 'logs'),
          secrets: { kind: 'os-keychain' },
        },
      },
    });
  });

  it('keeps tokens encrypted by safeStorage in the data folder', async () => {
    const saved = await invoke(
      'saveConnection',
      { kind: 'advent', name: 'Home', host: 'example.com', port: 8765 },
      'tok-PLAINTEXT-0',
    );
    if (!saved.ok) throw new Error(saved.error.message);
    const id = (saved.value as { id: string }).id;
    expect(await invoke('setSecret', id, 'tok-PLAINTEXT-123')).toEqual({
      ok: true,
      value: undefined,
    });
    const raw = await readFile(path.join(dir, 'xdg', 'advent-agent', 'secrets.safe.json'), 'utf8');
    expect(raw).toContain(`profile:${id}:token`);
    expect(raw).not.toContain('tok-PLAINTEXT-123');
    const settings = await readFile(
      path.join(dir, 'xdg', 'advent-agent', 'settings.json'),
      'utf8',
    ).catch(() => '');
    expect(settings).not.toContain('tok-PLAINTEXT-123');
  });

  it('with "keep running" ticked in the tray, closing hides the window; a second launch brings it back', async () => {
    const tray = FakeTray.instances[0];
    // Linux: off until the user ticks it in the tray menu (host-prefs.ts says why).
    expect(tray?.item('keepInTray')).toMatchObject({ type: 'checkbox', checked: false });
    tray?.click('keepInTray');
    await vi.waitFor(async () =>
      expect(
        JSON.parse(await readFile(path.join(dir, 'userData', 'host-prefs.json'), 'utf8')),
      ).toEqual({ keepInTray: true }),
    );
    const win = mainWindow();
    win.show();
    win.close();
    expect(win.isDestroyed()).toBe(false);
    expect(win.isVisible()).toBe(false);
    expect(tray?.item('toggle').label).toBe('Show window');
    electron.app.emit('second-instance');
    expect(win.isVisible()).toBe(true);
    expect(win.isFocused()).toBe(true);
  });

  it('raises a notification and the window for a prompt while hidden', () => {
    const win = mainWindow();
    win.hide();
    host.api.events.emit('prompt', {
      id: 'p1',
      connection: { id: 'p-home', name: 'Home' },
      service: 'create_file',
      grantKey: 'create_file',
      params: {},
      summary: 'Create file a.txt',
      resolvedPaths: [],
      expiresAt: Date.now() + 60_000,
    });
    expect(FakeNotification.instances.at(-1)?.options.title).toBe('Home wants to run create_file');
    expect(win.isVisible() && win.isFocused()).toBe(true);
  });

  it('quits cleanly: the first quit waits for api.close(), then quits for real', async () => {
    const realClose = host.api.close.bind(host.api);
    let finishClose: () => void = () => undefined;
    const closeGate = new Promise<void>((resolve) => (finishClose = resolve));
    const close = vi.spyOn(host.api, 'close').mockImplementation(async () => {
      await closeGate;
      await realClose();
    });
    // The renderer registered the global push-to-talk shortcut: quitting gives it back.
    const setShortcut = electron.ipcMain.handlers.get('agent:setShortcut');
    const frame = { url: OWN, parent: null };
    expect(
      await setShortcut?.({ sender: { mainFrame: frame }, senderFrame: frame }, 'Alt+Shift+Space'),
    ).toEqual({ ok: true, value: 'Alt+Shift+Space' });
    expect(electron.globalShortcut.registered.has('Alt+Shift+Space')).toBe(true);
    const first = fakeEvent();
    electron.app.emit('before-quit', first);
    expect(first.defaultPrevented).toBe(true);
    // A second quit while closing is held too, and does not close twice.
    const again = fakeEvent();
    electron.app.emit('before-quit', again);
    expect(again.defaultPrevented).toBe(true);
    await vi.waitFor(() => expect(close).toHaveBeenCalledTimes(1));
    // Nothing quits while the connections are still saying goodbye.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(electron.app.quit).not.toHaveBeenCalled();
    finishClose();
    await vi.waitFor(() => expect(electron.app.quit).toHaveBeenCalledTimes(1));
    expect(close).toHaveBeenCalledTimes(1);
    expect(electron.ipcMain.handlers.has('agent:invoke')).toBe(false);
    expect(electron.ipcMain.handlers.has('agent:setShortcut')).toBe(false);
    expect(electron.globalShortcut.registered.size).toBe(0);
    expect(electron.globalShortcut.unregister).toHaveBeenCalledWith('Alt+Shift+Space');
    expect(FakeTray.instances[0]?.destroyed).toBe(true);
    // The real quit that follows went through, and closed the window on its way.
    expect(electron.app.quitted).toBe(true);
    expect(FakeBrowserWindow.instances[0]?.isDestroyed()).toBe(true);
    const last = fakeEvent();
    electron.app.emit('before-quit', last);
    expect(last.defaultPrevented).toBe(false);
  });
});

describe('host paths', () => {
  it('finds the preload and renderer beside the built main, icons in resources', () => {
    const p = hostPaths(false, '/opt/res', '/repo/dist/main/electron');
    expect(p).toEqual({
      preload: '/repo/dist/preload/preload.js',
      renderer: '/repo/dist/renderer',
      resources: '/repo/resources',
    });
    expect(hostPaths(true, '/opt/app/resources', '/x/app.asar/dist/main/electron').resources).toBe(
      '/opt/app/resources',
    );
    expect(trayIconPath('/r', 'darwin')).toBe('/r/trayTemplate.png');
    expect(trayIconPath('/r', 'linux')).toBe('/r/trayLinux.png');
    expect(trayIconPath('/r', 'win32')).toBe('/r/tray.png');
  });
});
