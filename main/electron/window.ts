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
import { escapeHtml } from '../headless/html.js';
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
      // Push-to-talk is used while the window is hidden in the tray: Chromium would otherwise
      // throttle the page's timers and animation frames there, and voice capture with them.
      backgroundThrottling: false,
    },
  };
}

/** Chromium's net::ERR_ABORTED: a load replaced by another one, not a failure. */
const ERR_ABORTED = -3;

/**
 * What the window shows when our page cannot load: a self-contained page (a data: URL, because
 * our own scheme may be what failed) with the reason, and no script. Its origin is opaque, so
 * every IPC and permission guard refuses it.
 */
export function loadErrorPage(reason: string, logFile?: string): string {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Advent Agent could not start</title>
<style>body{font:15px/1.5 system-ui,sans-serif;margin:3rem;color:#1f2328;background:#f6f7f9}
code{background:#e8eaee;padding:.1rem .3rem;border-radius:4px;overflow-wrap:anywhere}</style></head>
<body><h1>Advent Agent could not load its window</h1>
<p>Reason: <code>${escapeHtml(reason)}</code></p>
<p>Your settings and audit log are untouched. Try starting Advent Agent again; if this keeps
happening, reinstall it${logFile ? `, and include the log file <code>${escapeHtml(logFile)}</code> when you report the problem` : ''}.</p>
</body></html>`;
  return `data:text/html;charset=utf-8,${encodeURIComponent(html)}`;
}

export interface LoadFailureOptions {
  /** Told once, with the reason, when our page failed to load (the error page is then shown). */
  onLoadError?: (reason: string) => void;
  logFile?: string;
}

/**
 * A page that never loads never sends ready-to-show: the hidden window would stay hidden for
 * good. So a failed main-frame load (loadURL's rejection or did-fail-load, whichever comes first)
 * shows the window with an error page that says why.
 */
export function showLoadFailures(
  win: BrowserWindow,
  { onLoadError, logFile }: LoadFailureOptions = {},
): (reason: string) => void {
  let failed = false;
  const fail = (reason: string): void => {
    if (failed || win.isDestroyed()) return;
    failed = true;
    onLoadError?.(reason);
    void win.loadURL(loadErrorPage(reason, logFile)).catch(() => undefined);
    win.show();
  };
  win.webContents.on(
    'did-fail-load',
    (_event, errorCode, errorDescription, validatedURL, isMainFrame) => {
      if (!isMainFrame || errorCode === ERR_ABORTED) return;
      fail(`${errorDescription || 'load failed'} (${errorCode}) for ${validatedURL}`);
    },
  );
  return fail;
}

/**
 * Create the main window and load our page into it. The security flags are spelled out again at
 * the constructor, where static scanners (Electronegativity) look for them; a unit test proves
 * they equal windowOptions(), so the two cannot drift.
 */
export function createMainWindow(
  preloadPath: string,
  look: WindowLook = {},
  loading: LoadFailureOptions = {},
): BrowserWindow {
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
      backgroundThrottling: false,
    },
  });
  win.once('ready-to-show', () => win.show());
  const fail = showLoadFailures(win, loading);
  win.loadURL(APP_ENTRY).catch((err: unknown) => {
    const { code, errno } = (err ?? {}) as { code?: unknown; errno?: unknown };
    if (code === 'ERR_ABORTED' || errno === ERR_ABORTED) return;
    fail(err instanceof Error ? err.message : String(err));
  });
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
