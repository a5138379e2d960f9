import * as electronModule from 'electron';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createMainWindow,
  externalUrl,
  guardNavigation,
  hardenSession,
  hardenWebContents,
  loadErrorPage,
  permissionCheckHandler,
  permissionRequestHandler,
  windowOpenHandler,
  windowOptions,
} from '../../../main/electron/window.js';
import {
  FakeBrowserWindow,
  type FakeElectron,
  FakeWebContents,
  fakeEvent,
} from './fake-electron.js';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));
const electron = electronModule as unknown as FakeElectron;

beforeEach(() => {
  electron.shell.openExternal.mockClear();
  FakeBrowserWindow.instances = [];
  FakeBrowserWindow.failingLoads.clear();
});

describe('windowOptions', () => {
  it('turns on every isolation flag and off every Node and legacy door', () => {
    const prefs = windowOptions('/app/dist/preload/preload.js').webPreferences;
    expect(prefs).toMatchObject({
      preload: '/app/dist/preload/preload.js',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webviewTag: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      spellcheck: false,
      disableBlinkFeatures: 'Auxclick',
    });
  });

  it('keeps timers running while hidden in the tray (push-to-talk is used from there)', () => {
    // web-preferences: backgroundThrottling "Whether to throttle animations and timers when the
    // page becomes background" (default true).
    expect(windowOptions('/p.js').webPreferences?.backgroundThrottling).toBe(false);
  });

  it('stays hidden until ready-to-show, with a sensible size and a background colour', () => {
    const light = windowOptions('/p.js');
    const dark = windowOptions('/p.js', { dark: true });
    expect(light.show).toBe(false);
    expect(light.width).toBeGreaterThanOrEqual(light.minWidth ?? Infinity);
    expect(light.height).toBeGreaterThanOrEqual(light.minHeight ?? Infinity);
    expect(light.minWidth).toBeGreaterThanOrEqual(600);
    expect(light.backgroundColor).toMatch(/^#[0-9a-f]{6}$/);
    expect(dark.backgroundColor).not.toBe(light.backgroundColor);
  });

  it('createMainWindow builds exactly windowOptions(), loads app://advent and shows when ready', () => {
    const win = createMainWindow('/p.js', {
      dark: true,
      icon: '/r/icon.png',
    }) as unknown as FakeBrowserWindow;
    expect(win.options).toEqual(windowOptions('/p.js', { dark: true, icon: '/r/icon.png' }));
    expect(win.loadedUrl).toBe('app://advent/index.html');
    expect(win.show).not.toHaveBeenCalled();
    win.emit('ready-to-show');
    expect(win.show).toHaveBeenCalledTimes(1);
  });
});

describe('a page that fails to load', () => {
  it('shows the window with an error page naming the reason (loadURL rejects)', async () => {
    FakeBrowserWindow.failingLoads.set('app://advent/', {
      errorCode: -6,
      errorName: 'ERR_FILE_NOT_FOUND',
    });
    const onLoadError = vi.fn();
    const win = createMainWindow(
      '/p.js',
      {},
      { onLoadError, logFile: '/logs/main.log' },
    ) as unknown as FakeBrowserWindow;
    await vi.waitFor(() => expect(win.show).toHaveBeenCalled());
    expect(onLoadError).toHaveBeenCalledTimes(1);
    expect(onLoadError.mock.calls[0]?.[0]).toMatch(/ERR_FILE_NOT_FOUND \(-6\)/);
    expect(win.loadedUrl).toMatch(/^data:text\/html/);
    const page = decodeURIComponent(win.loadedUrl?.split(',')[1] ?? '');
    expect(page).toContain('ERR_FILE_NOT_FOUND');
    expect(page).toContain('/logs/main.log');
    // The error page runs nothing: no script may execute in it.
    expect(page).toContain("default-src 'none'");
    expect(page).not.toMatch(/<script/i);
  });

  it('a subframe failure or an aborted load (ERR_ABORTED) is not an error', () => {
    const win = createMainWindow('/p.js') as unknown as FakeBrowserWindow;
    win.webContents.emit('did-fail-load', fakeEvent(), -3, 'ERR_ABORTED', 'app://advent/', true);
    win.webContents.emit(
      'did-fail-load',
      fakeEvent(),
      -105,
      'ERR_NAME_NOT_RESOLVED',
      'https://x/',
      false,
    );
    expect(win.show).not.toHaveBeenCalled();
    expect(win.loadedUrl).toBe('app://advent/index.html');
  });

  it('escapes the reason', () => {
    const page = decodeURIComponent(
      loadErrorPage('<img src=x onerror=alert(1)>').split(',')[1] ?? '',
    );
    expect(page).not.toContain('<img');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });
});

describe('navigation', () => {
  it.each([
    'https://evil.example/',
    'http://advent/',
    'file:///etc/passwd',
    'app://other/index.html',
    'app://advent.evil/index.html',
    'app://user@advent/index.html',
    'javascript:alert(1)',
    'about:blank',
    'not a url',
  ])('prevents leaving our origin for %s', (url) => {
    const event = fakeEvent(url);
    guardNavigation(event, url);
    expect(event.defaultPrevented).toBe(true);
  });

  it.each(['app://advent/index.html', 'app://advent/settings#roots', 'app://advent/'])(
    'allows same-origin navigation to %s',
    (url) => {
      const event = fakeEvent(url);
      guardNavigation(event, url);
      expect(event.defaultPrevented).toBe(false);
    },
  );

  it('hardens a web contents: will-navigate, will-redirect, will-frame-navigate, webviews', () => {
    const contents = new FakeWebContents();
    hardenWebContents(contents as unknown as Electron.WebContents);
    for (const name of ['will-navigate', 'will-redirect', 'will-frame-navigate']) {
      const away = fakeEvent('https://evil.example/');
      contents.emit(name, away);
      expect(away.defaultPrevented, name).toBe(true);
      const home = fakeEvent('app://advent/index.html');
      contents.emit(name, home);
      expect(home.defaultPrevented, name).toBe(false);
    }
    const webview = fakeEvent();
    contents.emit('will-attach-webview', webview, {}, {});
    expect(webview.defaultPrevented).toBe(true);
    expect(contents.windowOpenHandler?.({ url: 'https://example.com/' })).toEqual({
      action: 'deny',
    });
  });
});

describe('window-open handler', () => {
  it('denies the popup and hands an https link to the browser', async () => {
    expect(windowOpenHandler({ url: 'https://docs.example.com/help?a=1' })).toEqual({
      action: 'deny',
    });
    expect(electron.shell.openExternal).toHaveBeenCalledWith('https://docs.example.com/help?a=1');
  });

  it.each([
    'http://example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'app://advent/index.html',
    'smb://server/share',
    'ms-msdt:/id PCWDiagnostic',
    'https://user:pass@example.com/',
    'data:text/html,<script>alert(1)</script>',
    '',
  ])('denies %s without opening anything', (url) => {
    expect(windowOpenHandler({ url })).toEqual({ action: 'deny' });
    expect(electron.shell.openExternal).not.toHaveBeenCalled();
  });

  it('normalises the URL it passes on', () => {
    expect(externalUrl('HTTPS://Example.COM/a b')).toBe('https://example.com/a%20b');
    expect(externalUrl(42)).toBeUndefined();
  });
});

describe('permissions', () => {
  const own = { isMainFrame: true, requestingUrl: 'app://advent/index.html' };

  function request(permission: string, details: Record<string, unknown>): boolean {
    let granted: boolean | undefined;
    permissionRequestHandler(null, permission, (g) => (granted = g), details);
    if (granted === undefined) throw new Error('the callback was not called');
    return granted;
  }

  it('grants the microphone to our own page', () => {
    expect(request('media', { ...own, mediaTypes: ['audio'] })).toBe(true);
    expect(
      request('media', { ...own, mediaTypes: ['audio'], securityOrigin: 'app://advent' }),
    ).toBe(true);
  });

  it.each([
    ['camera', 'media', { ...own, mediaTypes: ['video'] }],
    ['camera with the microphone', 'media', { ...own, mediaTypes: ['audio', 'video'] }],
    ['media with no types', 'media', { ...own }],
    ['media with empty types', 'media', { ...own, mediaTypes: [] }],
    ['notifications', 'notifications', own],
    ['geolocation', 'geolocation', own],
    ['clipboard', 'clipboard-read', own],
    ['screen capture', 'display-capture', { ...own, mediaTypes: ['audio'] }],
    ['openExternal', 'openExternal', own],
    [
      'another origin',
      'media',
      { isMainFrame: true, requestingUrl: 'https://evil.example/', mediaTypes: ['audio'] },
    ],
    [
      'a file page',
      'media',
      { isMainFrame: true, requestingUrl: 'file:///srv/x.html', mediaTypes: ['audio'] },
    ],
    ['a subframe', 'media', { ...own, isMainFrame: false, mediaTypes: ['audio'] }],
    [
      'a foreign security origin',
      'media',
      { ...own, mediaTypes: ['audio'], securityOrigin: 'https://evil.example' },
    ],
  ])('denies %s', (_name, permission, details) => {
    expect(request(permission, details)).toBe(false);
  });

  it('checks follow the same rule', () => {
    const check = (permission: string, origin: string, details: Record<string, unknown>) =>
      permissionCheckHandler(null, permission, origin, details);
    expect(check('media', 'app://advent', { isMainFrame: true, mediaType: 'audio' })).toBe(true);
    expect(check('media', 'app://advent/', { isMainFrame: true, mediaType: 'audio' })).toBe(true);
    expect(check('media', 'app://advent', { isMainFrame: true, mediaType: 'video' })).toBe(false);
    expect(check('media', 'app://advent', { isMainFrame: true, mediaType: 'unknown' })).toBe(false);
    expect(check('media', 'https://evil.example', { isMainFrame: true, mediaType: 'audio' })).toBe(
      false,
    );
    expect(check('media', 'app://advent', { isMainFrame: false, mediaType: 'audio' })).toBe(false);
    expect(check('notifications', 'app://advent', { isMainFrame: true })).toBe(false);
    expect(check('geolocation', 'app://advent', { isMainFrame: true })).toBe(false);
    expect(check('hid', 'app://advent', { isMainFrame: true })).toBe(false);
  });

  it('installs both handlers on the session and refuses every device', () => {
    const ses = electron.session.defaultSession;
    hardenSession(ses as unknown as Electron.Session);
    const onRequest = ses.setPermissionRequestHandler.mock.calls[0]?.[0] as (
      ...a: unknown[]
    ) => void;
    const onCheck = ses.setPermissionCheckHandler.mock.calls[0]?.[0] as (
      ...a: unknown[]
    ) => boolean;
    const onDevice = ses.setDevicePermissionHandler.mock.calls[0]?.[0] as () => boolean;
    const granted = vi.fn();
    onRequest(null, 'media', granted, { ...own, mediaTypes: ['audio'] });
    onRequest(null, 'geolocation', granted, own);
    expect(granted.mock.calls).toEqual([[true], [false]]);
    expect(onCheck(null, 'media', 'app://advent', { isMainFrame: true, mediaType: 'audio' })).toBe(
      true,
    );
    expect(onCheck(null, 'notifications', 'app://advent', { isMainFrame: true })).toBe(false);
    expect(onDevice()).toBe(false);
  });
});
