/**
 * The Electron host's lifecycle: one instance, the sandbox everywhere, the core opened over
 * safeStorage, one window (hidden to the tray when closed), guarded IPC, the tray and prompt
 * notifications, and a clean quit that waits for every connection's DISCONNECT handshake.
 */
import path from 'node:path';
import { type BrowserWindow, app, dialog, nativeTheme, session } from 'electron';
import { CoreApi } from '../../app/api.js';
import { systemDataDir, systemFilesRoot } from '../../app/settings/paths.js';
import { attachWindow, wireIpc } from './ipc.js';
import { type Log, setupLog } from './log.js';
import { notifyPrompts } from './notify.js';
import { desktopOptions, notifyReminders } from './desktop.js';
import { type HostPaths, trayIconPath } from './paths.js';
import { registerAppScheme, serveApp } from './protocol.js';
import { SafeStorageSecretStore } from './secrets.js';
import { type AppTray, createTray } from './tray.js';
import { createMainWindow, hardenSession, hardenWebContents } from './window.js';
import { startDemoServer } from '../../sim/demo-server.js';

export const APP_USER_MODEL_ID = 'ai.advent.agent';
/** How long a quit waits for the connections to say goodbye before it goes anyway. */
export const CLOSE_TIMEOUT_MS = 5_000;

export interface Host {
  api: CoreApi;
  log: Log;
  window(): BrowserWindow | undefined;
  showWindow(): void;
  tray(): AppTray | undefined;
}

function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([promise.then(() => undefined), timeout]).finally(() => clearTimeout(timer));
}

/** Start the host; resolves undefined when another instance already runs (this one quits). */
export async function startHost(paths: HostPaths): Promise<Host | undefined> {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return undefined;
  }
  // Before ready: every renderer sandboxed, and our scheme privileged.
  app.enableSandbox();
  registerAppScheme();
  app.setAppUserModelId(APP_USER_MODEL_ID);
  const log = setupLog({ logDir: app.getPath('logs') });
  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents));

  let win: BrowserWindow | undefined;
  let tray: AppTray | undefined;
  // Set once the core starts opening; a quit during startup waits for it, then closes it.
  const core: { opening?: Promise<CoreApi> } = {};
  let quitting = false;
  let closed = false;
  let closing: Promise<void> | undefined;
  const disposers: (() => void)[] = [];

  const shutdown = async (): Promise<void> => {
    for (const dispose of disposers.splice(0).reverse()) {
      try {
        dispose();
      } catch (err) {
        log.warn('cleanup failed:', err);
      }
    }
    tray?.destroy();
    tray = undefined;
    const api = await core.opening?.catch(() => undefined);
    if (!api) return;
    log.info('closing connections…');
    await withTimeout(
      api.close().catch((err: unknown) => log.error('closing the agent failed:', err)),
      CLOSE_TIMEOUT_MS,
    );
  };

  // Quit waits for api.close(): prevent the first quit, close, then quit for real.
  app.on('before-quit', (event) => {
    quitting = true;
    if (closed) return;
    event.preventDefault();
    closing ??= shutdown().finally(() => {
      closed = true;
      app.quit();
    });
  });

  await app.whenReady();
  serveApp(paths.renderer);
  hardenSession(session.defaultSession);

  // The same data folder as the terminal and browser hosts (one audit log, one set of settings;
  // the data-folder lock keeps two agents from using it at once). Electron's own userData keeps
  // Chromium's state. Secrets are encrypted here, so they live in a file of their own.
  const dataDir = systemDataDir();
  const secrets = await SafeStorageSecretStore.open(path.join(dataDir, 'secrets.safe.json'));
  if (secrets.warning) log.warn(secrets.warning);
  core.opening = CoreApi.open({
    dataDir,
    defaultFilesRoot: systemFilesRoot(),
    secrets,
    secretsWarning: secrets.warning,
    host: 'electron',
    version: app.getVersion(),
    logDir: app.getPath('logs'),
    demo: startDemoServer,
    desktop: desktopOptions(),
  });
  const api = await core.opening;
  api.events.on('notice', (n) =>
    log[n.level](n.connection ? `[${n.connection.name}] ${n.message}` : n.message),
  );

  const openWindow = (): BrowserWindow => {
    const theme = api.agent.getSettings().theme;
    const dark = theme === 'dark' || (theme === 'system' && nativeTheme.shouldUseDarkColors);
    const created = createMainWindow(paths.preload, {
      dark,
      icon: path.join(paths.resources, 'icon.png'),
    });
    attachWindow(api, created);
    // With a tray, closing hides: the agent keeps its connections and can still ask the user.
    created.on('close', (event) => {
      if (quitting || !tray) return;
      event.preventDefault();
      created.hide();
    });
    created.on('show', () => tray?.refresh());
    created.on('hide', () => tray?.refresh());
    created.on('closed', () => {
      if (win === created) win = undefined;
    });
    win = created;
    return created;
  };

  const showWindow = (): void => {
    const target = win && !win.isDestroyed() ? win : openWindow();
    if (target.isMinimized()) target.restore();
    target.show();
    target.focus();
  };

  disposers.push(wireIpc({ api, getWindow: () => win, warn: (m) => log.warn(m) }));
  openWindow();

  try {
    tray = createTray({
      api,
      initial: (await api.snapshot()).connections,
      iconPath: trayIconPath(paths.resources),
      isWindowVisible: () => !!win && !win.isDestroyed() && win.isVisible(),
      showWindow,
      hideWindow: () => win?.hide(),
      quit: () => app.quit(),
    });
  } catch (err) {
    // Some Linux desktops have no tray: then closing the window quits, as without a tray.
    log.warn('no tray icon:', err);
  }
  disposers.push(
    notifyPrompts({
      api,
      getWindow: () => (win && !win.isDestroyed() ? win : undefined),
      showWindow,
      iconPath: path.join(paths.resources, 'icon.png'),
    }),
    notifyReminders({
      api,
      language: () => api.agent.getSettings().language,
      showWindow,
      iconPath: path.join(paths.resources, 'icon.png'),
    }),
  );

  app.on('second-instance', () => showWindow());
  app.on('activate', () => showWindow());
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  log.info(`Advent Agent ${app.getVersion()} started`);

  return { api, log, window: () => win, showWindow, tray: () => tray };
}

/** A start that failed leaves nothing half-open: say why, then exit. */
export function failStart(err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  try {
    dialog.showErrorBox('Advent Agent could not start', message);
  } finally {
    app.exit(1);
  }
}
