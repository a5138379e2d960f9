/**
 * The one window and the rules every web contents and the session live under: Chromium's sandbox
 * and context isolation, no Node, no navigation away from our origin, no popups (https links go
 * to the browser), no <webview>, and only the microphone as a permission, only for our own page.
 */
import {
  BrowserWindow,
  type BrowserWindowConstructorOptions,
  type HandlerDetails,
  type PermissionCheckHandlerHandlerDetails,
  type PermissionRequest,
  type Session,
  type WebContents,
  type WindowOpenHandlerResponse,
  shell,
} from 'electron';
import { APP_ENTRY, isOwnOrigin } from './origin.js';

export interface WindowLook {
  /** Paint the window dark before the page does, so a dark theme does not flash white. */
  dark?: boolean;
  /** Window icon (Linux and Windows; macOS takes the bundle's). */
  icon?: string;
}

export function windowOptions(
  preloadPath: string,
  { dark = false, icon }: WindowLook = {},
): BrowserWindowConstructorOptions {
  return {
    title: 'Advent Agent',
    width: 1120,
    height: 780,
    minWidth: 720,
    minHeight: 520,
    // Shown on ready-to-show: no blank frame while the renderer loads.
    show: false,
    backgroundColor: dark ? '#16181d' : '#f6f7f9',
    autoHideMenuBar: true,
    ...(icon ? { icon } : {}),
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webviewTag: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
      // A middle click would otherwise open links without going through the window-open handler.
      disableBlinkFeatures: 'Auxclick',
    },
  };
}

/**
 * Create the main window and load our page into it. The security flags are spelled out again at
 * the constructor, where static scanners (Electronegativity) look for them; a unit test proves
 * they equal windowOptions(), so the two cannot drift.
 */
export function createMainWindow(preloadPath: string, look: WindowLook = {}): BrowserWindow {
  const options = windowOptions(preloadPath, look);
  const win = new BrowserWindow({
    ...options,
    webPreferences: {
      ...options.webPreferences,
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webviewTag: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      disableBlinkFeatures: 'Auxclick',
    },
  });
  win.once('ready-to-show', () => win.show());
  void win.loadURL(APP_ENTRY);
  return win;
}

// --- navigation ------------------------------------------------------------------------------

interface Preventable {
  preventDefault(): void;
}

/** `will-navigate` / `will-redirect` / `will-frame-navigate`: stay on our origin. */
export function guardNavigation(event: Preventable, url: string): void {
  if (!isOwnOrigin(url)) event.preventDefault();
}

/** Only a well-formed https URL is handed to the user's browser; nothing ever opens in-app. */
export function externalUrl(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' || !parsed.hostname || parsed.username || parsed.password)
      return undefined;
    return parsed.href;
  } catch {
    return undefined;
  }
}

/** Every popup is denied; an https link opens in the user's browser instead. */
export function windowOpenHandler(details: Pick<HandlerDetails, 'url'>): WindowOpenHandlerResponse {
  const url = externalUrl(details.url);
  if (url) void shell.openExternal(url).catch(() => undefined);
  return { action: 'deny' };
}

/** Applied to every web contents the app creates (app 'web-contents-created'). */
export function hardenWebContents(contents: WebContents): void {
  contents.on('will-navigate', (event) => guardNavigation(event, event.url));
  contents.on('will-frame-navigate', (event) => guardNavigation(event, event.url));
  contents.on('will-redirect', (event) => guardNavigation(event, event.url));
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler((details) => windowOpenHandler(details));
}

// --- permissions -----------------------------------------------------------------------------

/** Microphone only: `media` for audio alone, asked by our own page's main frame. */
export function permissionRequestHandler(
  _contents: WebContents | null,
  permission: string,
  callback: (granted: boolean) => void,
  details: Partial<PermissionRequest> & { mediaTypes?: string[]; securityOrigin?: string },
): void {
  callback(
    permission === 'media' &&
      details.isMainFrame === true &&
      isOwnOrigin(details.requestingUrl) &&
      (details.securityOrigin === undefined || isOwnOrigin(details.securityOrigin)) &&
      Array.isArray(details.mediaTypes) &&
      details.mediaTypes.length === 1 &&
      details.mediaTypes[0] === 'audio',
  );
}

/** Synchronous checks (e.g. before getUserMedia): the same rule as requests. */
export function permissionCheckHandler(
  _contents: WebContents | null,
  permission: string,
  requestingOrigin: string,
  details: Partial<PermissionCheckHandlerHandlerDetails>,
): boolean {
  return (
    permission === 'media' &&
    details.mediaType === 'audio' &&
    details.isMainFrame === true &&
    isOwnOrigin(requestingOrigin) &&
    (details.securityOrigin === undefined || isOwnOrigin(details.securityOrigin))
  );
}

export function hardenSession(ses: Session): void {
  ses.setPermissionRequestHandler((contents, permission, callback, details) =>
    permissionRequestHandler(contents, permission, callback, details),
  );
  ses.setPermissionCheckHandler((contents, permission, requestingOrigin, details) =>
    permissionCheckHandler(contents, permission, requestingOrigin, details),
  );
  // HID, serial and USB devices: never.
  ses.setDevicePermissionHandler(() => false);
}
