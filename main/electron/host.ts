/**
 * The Electron host's lifecycle: one instance, the sandbox everywhere, the core opened over
 * safeStorage, one window (hidden to the tray when closed, where the user chose so), guarded IPC,
 * the tray and prompt notifications, and a clean quit that waits for every connection's
 * DISCONNECT handshake — also when Windows ends the session, which emits no `before-quit`.
 *
 * A quit may come at any await of the start (a second Ctrl+Q, the session ending): after each one
 * the start checks `quitting` and opens nothing more.
 */
import path from 'node:path';
import { type BrowserWindow, app, dialog, nativeTheme, session } from 'electron';
import { CoreApi } from '../../app/api.js';
import { systemDataDir, systemFilesRoot } from '../../app/settings/paths.js';
import { HostPrefsFile } from './host-prefs.js';
import { attachWindow, wireIpc } from './ipc.js';
import { type Log, setupLog } from './log.js';
import { installAppMenu } from './menu.js';
import { notifyPrompts } from './notify.js';
import { desktopOptions, notifyReminders } from './desktop.js';
import { type HostPaths, trayIconPath } from './paths.js';
import { electronMcpOptions } from './mcp-launcher.js';
import { electronMcpLaunch } from './mcp-mode.js';
import { registerAppScheme, serveApp } from './protocol.js';
import { SafeStorageSecretStore } from './secrets.js';
import { shortcutBackend } from './shortcut.js';
import { type AppTray, createTray } from './tray.js';
import { createMainWindow, hardenSession, hardenWebContents } from './window.js';
import { startDemoServer } from '../../sim/demo-server.js';

/** electron-builder.yml's appId: the NSIS installer gives the Start-menu shortcut this ID. */
export const APP_USER_MODEL_ID = 'ai.advent.agent';
/** How long a quit waits for the connections to say goodbye before it goes anyway. */
export const CLOSE_TIMEOUT_MS = 5_000;

/**
 * Windows shows a toast only for an AppUserModelID that a Start-menu shortcut carries. The
 * installer's shortcut has the appId; an unpackaged `npm start` has no shortcut of its own, and
 * Electron's notifications tutorial pins electron.exe and uses its path (process.execPath).
 */
export function appUserModelId(packaged: boolean, execPath: string = process.execPath): string {
  return packaged ? APP_USER_MODEL_ID : execPath;
}

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

export interface HostOptions {
  /** Defaults to process.platform; tests pass another. */
  platform?: NodeJS.Platform;
}

/** Start the host; resolves undefined when it does not run (another instance, or a quit). */
export async function startHost(
  paths: HostPaths,
  { platform = process.platform }: HostOptions = {},
): Promise<Host | undefined> {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return undefined;
  }
  // Before ready: every renderer sandboxed, and our scheme privileged.
  app.enableSandbox();
  registerAppScheme();
  app.setAppUserModelId(appUserModelId(app.isPackaged));
  const log = setupLog({ logDir: app.getPath('logs') });
  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents));

  let win: BrowserWindow | undefined;
  let tray: AppTray | undefined;
  // `opening` is set once the core starts opening (a quit during startup waits for it, then closes
  // it); `api` and `prefs` once the start got that far without a quit.
  const core: { opening?: Promise<CoreApi>; api?: CoreApi; prefs?: HostPrefsFile } = {};
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
    const opened = await core.opening?.catch(() => undefined);
    if (!opened) return;
    log.info('closing connections…');
    await withTimeout(
      opened.close().catch((err: unknown) => log.error('closing the agent failed:', err)),
      CLOSE_TIMEOUT_MS,
    );
  };

  /** The one way out: say goodbye (connections, audit), then quit for real. */
  const beginQuit = (): void => {
    quitting = true;
    closing ??= shutdown().finally(() => {
      closed = true;
      app.quit();
    });
  };

  // Quit waits for api.close(): prevent the first quit, close, then quit for real.
  app.on('before-quit', (event) => {
    quitting = true;
    if (closed) return;
    event.preventDefault();
    beginQuit();
  });

  const openWindow = (opened: CoreApi): BrowserWindow => {
    const theme = opened.agent.getSettings().theme;
    const dark = theme === 'dark' || (theme === 'system' && nativeTheme.shouldUseDarkColors);
    const created = createMainWindow(
      paths.preload,
      { dark, icon: path.join(paths.resources, 'icon.png') },
      {
        onLoadError: (reason) => log.error(`the window could not load the app: ${reason}`),
        logFile: path.join(app.getPath('logs'), 'main.log'),
      },
    );
    attachWindow(opened, created);
    // Hidden to the tray only where the user can see the tray (host-prefs.ts); else it quits.
    created.on('close', (event) => {
      if (quitting || !tray || !core.prefs?.get().keepInTray) return;
      event.preventDefault();
      created.hide();
    });
    created.on('show', () => tray?.refresh());
    created.on('hide', () => tray?.refresh());
    // Windows: shutdown, restart and log-off end the app without `before-quit`. The window hears
    // it first (query-session-end), so the goodbye and the audit's last records start there.
    const sessionEnds = (event: Electron.WindowSessionEndEvent): void => {
      if (quitting) return;
      log.info(`Windows is ending the session (${event.reasons.join(', ')}): closing connections`);
      beginQuit();
    };
    created.on('query-session-end', sessionEnds);
    created.on('session-end', sessionEnds);
    created.on('closed', () => {
      if (win === created) win = undefined;
    });
    win = created;
    return created;
  };

  const showWindow = (): void => {
    if (quitting || !core.api) return;
    const target = win && !win.isDestroyed() ? win : openWindow(core.api);
    if (target.isMinimized()) target.restore();
    target.show();
    target.focus();
  };

  // At once, not after the start: a second launch meanwhile would otherwise be dropped. Before
  // the window exists it is remembered, and the window is raised as soon as it is there.
  let raiseWhenOpen = false;
  app.on('second-instance', () => {
    if (core.api) showWindow();
    else raiseWhenOpen = !quitting;
  });
  app.on('activate', () => showWindow());
  app.on('window-all-closed', () => {
    if (platform !== 'darwin') app.quit();
  });

  await app.whenReady();
  if (quitting) return undefined;
  installAppMenu(app.isPackaged, platform);
  serveApp(paths.renderer);
  hardenSession(session.defaultSession);

  // The same data folder as the terminal and browser hosts (one audit log, one set of settings;
  // the data-folder lock keeps two agents from using it at once). Electron's own userData keeps
  // Chromium's state and this host's own choices. Secrets are encrypted here, so they live in a
  // file of their own.
  const dataDir = systemDataDir();
  const [secrets, hostPrefs] = await Promise.all([
    SafeStorageSecretStore.open(path.join(dataDir, 'secrets.safe.json')),
    HostPrefsFile.open(path.join(app.getPath('userData'), 'host-prefs.json'), platform),
  ]);
  if (quitting) return undefined;
  core.prefs = hostPrefs;
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
    // Bundled JS servers as utility processes; everything else with the login shell's PATH.
    mcp: electronMcpOptions(),
    desktop: desktopOptions(),
    mcpLaunch: electronMcpLaunch(app.isPackaged),
  });
  const opened = await core.opening;
  // The quit that came meanwhile closes it (shutdown awaits core.opening).
  if (quitting) return undefined;
  core.api = opened;
  opened.events.on('notice', (n) =>
    log[n.level](n.connection ? `[${n.connection.name}] ${n.message}` : n.message),
  );

  disposers.push(
    wireIpc({
      api: opened,
      getWindow: () => win,
      warn: (m) => log.warn(m),
      shortcutBackend: shortcutBackend(
        platform,
        process.env,
        app.commandLine.getSwitchValue('ozone-platform'),
      ),
      notice: (notice) => opened.events.emit('notice', { level: 'warn', ...notice }),
    }),
  );
  openWindow(opened);
  if (raiseWhenOpen) showWindow();

  const initial = (await opened.snapshot()).connections;
  if (quitting) return undefined;
  try {
    tray = createTray({
      api: opened,
      initial,
      iconPath: trayIconPath(paths.resources, platform),
      isWindowVisible: () => !!win && !win.isDestroyed() && win.isVisible(),
      showWindow,
      hideWindow: () => win?.hide(),
      quit: () => app.quit(),
      keepInTray: {
        get: () => hostPrefs.get().keepInTray,
        set: (keepInTray) => {
          hostPrefs
            .set({ keepInTray })
            .catch((err: unknown) => log.warn('could not save the tray choice:', err));
        },
      },
    });
  } catch (err) {
    // Where creating a tray fails outright, closing the window quits, as without a tray.
    log.warn('no tray icon:', err);
  }
  disposers.push(
    notifyPrompts({
      api: opened,
      getWindow: () => (win && !win.isDestroyed() ? win : undefined),
      showWindow,
      iconPath: path.join(paths.resources, 'icon.png'),
      warn: (m) => log.warn(m),
    }),
    notifyReminders({
      api: opened,
      language: () => opened.agent.getSettings().language,
      showWindow,
      iconPath: path.join(paths.resources, 'icon.png'),
    }),
  );
  log.info(`Advent Agent ${app.getVersion()} started`);

  return { api: opened, log, window: () => win, showWindow, tray: () => tray };
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
