/**
 * A stand-in for the 'electron' module, which cannot run here (DESIGN §7). Only Electron's own
 * APIs are faked; everything of ours runs for real. Each test file gets a fresh instance through
 * `vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()))` and
 * reaches it with `import * as electron from 'electron'` cast to FakeElectron.
 */
import { EventEmitter } from 'node:events';
import { vi } from 'vitest';

export interface FakeFrame {
  url: string;
  parent: FakeFrame | null;
}

/** An Electron-style event: preventDefault is recorded, `url` set for navigation events. */
export function fakeEvent(url?: string): {
  url: string;
  preventDefault: () => void;
  defaultPrevented: boolean;
} {
  const event = {
    url: url ?? '',
    defaultPrevented: false,
    preventDefault() {
      event.defaultPrevented = true;
    },
  };
  return event;
}

export class FakeWebContents extends EventEmitter {
  url = '';
  destroyed = false;
  readonly mainFrame: FakeFrame = { url: 'app://advent/index.html', parent: null };
  windowOpenHandler: ((details: { url: string }) => { action: string }) | undefined;
  readonly send = vi.fn();
  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }): void {
    this.windowOpenHandler = handler;
  }
  getURL(): string {
    return this.url;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
}

/** How Chromium names a failed load: net error code and its name (net/base/net_error_list.h). */
export interface LoadFailure {
  errorCode: number;
  errorName: string;
}

export class FakeBrowserWindow extends EventEmitter {
  static instances: FakeBrowserWindow[] = [];
  /** URLs (by prefix) whose loads fail, as a missing app.asar file or a broken scheme would. */
  static failingLoads = new Map<string, LoadFailure>();
  /** Set by fakeElectron(): app emits window-all-closed when the last window is gone. */
  static onAllClosed: () => void = () => undefined;
  readonly webContents = new FakeWebContents();
  visible = false;
  focused = false;
  minimized = false;
  destroyed = false;
  loadedUrl: string | undefined;

  constructor(readonly options: Record<string, unknown>) {
    super();
    FakeBrowserWindow.instances.push(this);
  }
  /**
   * Electron's contract (web-contents.md, `contents.loadURL`): the promise resolves when the page
   * has finished loading (did-finish-load) and rejects if it fails to load (did-fail-load, with
   * errorCode, errorDescription, validatedURL, isMainFrame); the rejection is an Error with the
   * net error's name as `code` and number as `errno`.
   */
  loadURL = vi.fn(async (url: string) => {
    this.loadedUrl = url;
    const failure = [...FakeBrowserWindow.failingLoads].find(([prefix]) =>
      url.startsWith(prefix),
    )?.[1];
    if (failure) {
      this.webContents.emit(
        'did-fail-load',
        fakeEvent(),
        failure.errorCode,
        failure.errorName,
        url,
        true,
      );
      throw Object.assign(
        new Error(`${failure.errorName} (${failure.errorCode}) loading '${url}'`),
        { code: failure.errorName, errno: failure.errorCode, url },
      );
    }
    this.webContents.url = url;
    this.webContents.mainFrame.url = url;
    this.webContents.emit('did-finish-load');
  });
  show = vi.fn(() => {
    this.visible = true;
    this.emit('show');
  });
  hide = vi.fn(() => {
    this.visible = false;
    this.focused = false;
    this.emit('hide');
  });
  focus = vi.fn(() => {
    this.focused = true;
  });
  restore = vi.fn(() => {
    this.minimized = false;
  });
  isVisible(): boolean {
    return this.visible;
  }
  isFocused(): boolean {
    return this.focused;
  }
  isMinimized(): boolean {
    return this.minimized;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  /** What Electron does on close when nothing prevents it. */
  close(): void {
    const event = fakeEvent();
    this.emit('close', event);
    if (event.defaultPrevented) return;
    this.destroyed = true;
    this.webContents.destroyed = true;
    this.emit('closed');
    if (FakeBrowserWindow.instances.every((w) => w.destroyed)) FakeBrowserWindow.onAllClosed();
  }
}

export interface FakeMenuItem {
  id?: string;
  label?: string;
  type?: string;
  role?: string;
  enabled?: boolean;
  checked?: boolean;
  submenu?: FakeMenuItem[];
  click?: (item: { checked: boolean }) => void;
}

/**
 * Electron's Tray. Its constructor never throws on Linux: shell/browser/ui/tray_icon_linux.cc
 * starts a StatusNotifierItem over D-Bus and, when no host answers, falls back asynchronously
 * (GtkStatusIcon, which GNOME does not show either), so a tray that nobody can see looks exactly
 * like one that works.
 */
export class FakeTray extends EventEmitter {
  static instances: FakeTray[] = [];
  tooltip = '';
  menu: { items: FakeMenuItem[] } | undefined;
  destroyed = false;
  constructor(readonly image: unknown) {
    super();
    FakeTray.instances.push(this);
  }
  setToolTip(text: string): void {
    this.tooltip = text;
  }
  setContextMenu(menu: FakeTray['menu']): void {
    this.menu = menu;
  }
  destroy(): void {
    this.destroyed = true;
  }
  /** What a click on a menu item does in Electron: a checkbox flips `checked`, then `click(item)`. */
  click(id: string): void {
    const item = this.item(id);
    if (item.type === 'checkbox') item.checked = !item.checked;
    item.click?.({ checked: item.checked === true });
  }
  item(id: string): FakeMenuItem {
    const found = this.menu?.items.find((i) => i.id === id);
    if (!found) throw new Error(`no menu item ${id}`);
    return found;
  }
}

export class FakeNotification extends EventEmitter {
  static instances: FakeNotification[] = [];
  static supported = true;
  static isSupported(): boolean {
    return FakeNotification.supported;
  }
  readonly show = vi.fn();
  readonly close = vi.fn(() => this.emit('close'));
  constructor(readonly options: { title?: string; body?: string }) {
    super();
    FakeNotification.instances.push(this);
  }
}

export type StorageBackend =
  'basic_text' | 'gnome_libsecret' | 'kwallet' | 'kwallet5' | 'kwallet6' | 'unknown';

export interface FakeSafeStorageOptions {
  /** Linux's selected backend (electron.d.ts SafeStorage.getSelectedStorageBackend). */
  backend?: StorageBackend;
  /** Whether the OS key store answers (false: a locked or refused Keychain / keyring). */
  keyAvailable?: boolean;
  /** Whether `app` has emitted ready; the fake electron module links this to app.whenReady. */
  isReady?: () => boolean;
  platform?: NodeJS.Platform;
}

/**
 * Electron 45's safeStorage, as electron/electron shell/browser/api/electron_api_safe_storage.cc
 * implements it (and electron.d.ts of electron@45.4.1 documents it):
 * - before `ready`, availability is false, the async calls reject ("safeStorage cannot be used
 *   before app is ready") and getSelectedStorageBackend() returns 'unknown';
 * - on Linux with the `basic_text` backend (no keyring), isEncryptionAvailable() is
 *   `OSCrypt::IsEncryptionAvailable() || (use_password_v10_ && backend == "basic_text")`: false
 *   until setUsePlainTextEncryption(true); isAsyncEncryptionAvailable() resolves true at once in
 *   that case. Without the flag we model the async encryptor as unavailable too (the strict
 *   reading: a hardcoded key is only used when the app asked for it);
 * - ciphertexts carry Chromium's version prefix: 'v10' for the hardcoded Linux key, 'v11' for a
 *   keyring key. decryptStringAsync of a v10 text while a keyring key is available resolves with
 *   `shouldReEncrypt: true` (the d.ts: "a new key is available that provides a different
 *   security level");
 * - the sync calls are deprecated in 45 (electron.d.ts: "Use ...Async instead") and can block the
 *   main thread on a Keychain prompt; they are spies here so tests can prove they are unused.
 * "Encryption" reverses the UTF-8 bytes and XORs them: no plaintext byte survives.
 */
export function fakeSafeStorage(options: FakeSafeStorageOptions = {}) {
  const {
    backend = 'gnome_libsecret',
    keyAvailable = true,
    isReady = () => true,
    platform = 'linux',
  } = options;
  const state = { usePlainText: false };
  const flip = (b: Buffer): Buffer => Buffer.from([...b].reverse().map((x) => x ^ 0x5a));
  const weak = (): boolean => platform === 'linux' && backend === 'basic_text';
  /** The key the encryptor would use now: 'v11' (OS key), 'v10' (hardcoded), or none. */
  const currentKey = (): 'v10' | 'v11' | undefined => {
    if (!isReady()) return undefined;
    if (weak()) return state.usePlainText ? 'v10' : undefined;
    return keyAvailable ? 'v11' : undefined;
  };
  const notReady = (): Error => new Error('safeStorage cannot be used before app is ready');
  const encrypt = (plain: string, prefix: string): Buffer =>
    Buffer.concat([Buffer.from(prefix), flip(Buffer.from(plain, 'utf8'))]);
  const decrypt = (cipher: Buffer): { prefix: string; text: string } | undefined => {
    const prefix = cipher.subarray(0, 3).toString();
    if (prefix !== 'v10' && prefix !== 'v11') return undefined;
    return { prefix, text: flip(cipher.subarray(3)).toString('utf8') };
  };
  const storage = {
    state,
    setUsePlainTextEncryption: vi.fn((usePlainText: boolean) => {
      state.usePlainText = usePlainText;
    }),
    getSelectedStorageBackend: vi.fn((): StorageBackend => (isReady() ? backend : 'unknown')),
    isAsyncEncryptionAvailable: vi.fn(async (): Promise<boolean> => currentKey() !== undefined),
    encryptStringAsync: vi.fn(async (plain: string): Promise<Buffer> => {
      if (!isReady()) throw notReady();
      const key = currentKey();
      if (!key)
        throw new Error(
          'Error while encrypting the text provided to safeStorage.encryptStringAsync.',
        );
      return encrypt(plain, key);
    }),
    decryptStringAsync: vi.fn(
      async (cipher: Buffer): Promise<{ shouldReEncrypt: boolean; result: string }> => {
        if (!isReady()) throw notReady();
        if (cipher.length === 0) return { shouldReEncrypt: false, result: '' };
        const key = currentKey();
        const opened = decrypt(cipher);
        // A v11 text needs the OS key; a v10 text opens with the hardcoded one on Linux.
        if (!opened || (opened.prefix === 'v11' && key !== 'v11') || !key)
          throw new Error(
            'Error while decrypting the ciphertext provided to safeStorage.decryptStringAsync.',
          );
        return { shouldReEncrypt: opened.prefix !== key, result: opened.text };
      },
    ),
    isEncryptionAvailable: vi.fn((): boolean => currentKey() !== undefined),
    encryptString: vi.fn((plain: string): Buffer => {
      const key = currentKey();
      if (!key)
        throw new Error(
          'Error while encrypting the text provided to safeStorage.encryptString. Encryption is not available.',
        );
      return encrypt(plain, key);
    }),
    decryptString: vi.fn((cipher: Buffer): string => {
      const opened = decrypt(cipher);
      if (!opened || !currentKey())
        throw new Error(
          'Error while decrypting the ciphertext provided to safeStorage.decryptString.',
        );
      return opened.text;
    }),
  };
  return storage;
}

export type FakeSafeStorage = ReturnType<typeof fakeSafeStorage>;

export function fakeElectron() {
  FakeBrowserWindow.instances = [];
  FakeBrowserWindow.failingLoads.clear();
  FakeBrowserWindow.onAllClosed = () => {
    if (!app.quitting) app.emit('window-all-closed', fakeEvent());
  };
  FakeTray.instances = [];
  FakeNotification.instances = [];
  FakeNotification.supported = true;

  const handlers = new Map<string, (event: unknown, ...args: unknown[]) => unknown>();
  const ipcMain = {
    handlers,
    handle: vi.fn((channel: string, fn: (event: unknown, ...args: unknown[]) => unknown) => {
      if (handlers.has(channel))
        throw new Error(`Attempted to register a second handler for '${channel}'`);
      handlers.set(channel, fn);
    }),
    removeHandler: vi.fn((channel: string) => handlers.delete(channel)),
    listeners: new Map<string, ((event: unknown, ...args: unknown[]) => void)[]>(),
    on: vi.fn((channel: string, fn: (event: unknown, ...args: unknown[]) => void) => {
      ipcMain.listeners.set(channel, [...(ipcMain.listeners.get(channel) ?? []), fn]);
    }),
    removeAllListeners: vi.fn((channel?: string) => {
      if (channel === undefined) ipcMain.listeners.clear();
      else ipcMain.listeners.delete(channel);
    }),
  };

  const rendererListeners = new Map<string, ((event: unknown, ...args: unknown[]) => void)[]>();
  const ipcRenderer = {
    listeners: rendererListeners,
    invoke: vi.fn(async (_channel: string, ..._args: unknown[]): Promise<unknown> => undefined),
    on: vi.fn((channel: string, fn: (event: unknown, ...args: unknown[]) => void) => {
      rendererListeners.set(channel, [...(rendererListeners.get(channel) ?? []), fn]);
    }),
    /** Test helper: what main's webContents.send(channel, ...args) would deliver. */
    deliver(channel: string, ...args: unknown[]): void {
      for (const fn of rendererListeners.get(channel) ?? []) fn({ sender: 'ipc' }, ...args);
    },
  };

  const exposed: Record<string, unknown> = {};
  const contextBridge = {
    exposed,
    exposeInMainWorld: vi.fn((key: string, api: unknown) => {
      exposed[key] = api;
    }),
  };

  const switches = new Map<string, string>();
  const app = Object.assign(new EventEmitter(), {
    isPackaged: false,
    /** Set by whenReady(), like Electron's `ready` (safeStorage refuses work before it). */
    ready: false,
    paths: {} as Record<string, string>,
    commandLine: {
      switches,
      hasSwitch: vi.fn((name: string) => switches.has(name)),
      getSwitchValue: vi.fn((name: string) => switches.get(name) ?? ''),
      appendSwitch: vi.fn((name: string, value = '') => void switches.set(name, value)),
    },
    isReady: vi.fn(() => app.ready),
    requestSingleInstanceLock: vi.fn(() => true),
    enableSandbox: vi.fn(),
    setAppUserModelId: vi.fn(),
    getPath: vi.fn((name: string) => {
      const p = app.paths[name];
      if (!p) throw new Error(`no fake path for ${name}`);
      return p;
    }),
    getVersion: vi.fn(() => '0.1.0-test'),
    /** Where an unpackaged app was started from (`electron .`). */
    getAppPath: vi.fn(() => '/dev/advent-agent'),
    whenReady: vi.fn(async () => {
      app.ready = true;
    }),
    /** Set once a quit went through (will-quit emitted). */
    quitted: false,
    /** Browser::is_quitting_: between a before-quit nobody prevented and the end. */
    quitting: false,
    /**
     * Electron's order (shell/browser/browser.cc, Browser::Quit / OnWindowAllClosed): a quit
     * already under way ignores another; `before-quit` (preventDefault cancels); every window is
     * closed (one whose `close` is prevented cancels the quit); closing the last one while quitting
     * emits `will-quit` instead of `window-all-closed`; then `quit`.
     */
    quit: vi.fn(() => {
      if (app.quitting || app.quitted) return;
      const event = fakeEvent();
      app.emit('before-quit', event);
      if (event.defaultPrevented) return;
      app.quitting = true;
      for (const win of FakeBrowserWindow.instances.filter((w) => !w.destroyed)) {
        win.close();
        if (!win.destroyed) {
          app.quitting = false;
          return;
        }
      }
      app.emit('will-quit', fakeEvent());
      app.emit('quit', fakeEvent(), 0);
      app.quitting = false;
      app.quitted = true;
    }),
    exit: vi.fn(),
  });

  /**
   * Accelerators registered by this app; `taken` ones belong to "another app" and fail. In
   * `portal` mode (Linux on Wayland) the fake follows electron_api_global_shortcut.cc: when the
   * listener's IsRegistrationHandledExternally() is true, register() hands the command to the
   * XDG GlobalShortcuts portal and returns true whatever the desktop decides, isRegistered() is
   * true, and unregister() finds nothing in accelerator_callback_map_ so the binding stays. The
   * desktop only delivers presses when it accepted the binding (`portalAccepts`: it needs a valid
   * desktop-file identity).
   */
  const shortcuts = new Map<string, () => void>();
  const portalBindings = new Map<string, () => void>();
  const globalShortcut = {
    registered: shortcuts,
    portalBindings,
    taken: new Set<string>(),
    mode: 'system' as 'system' | 'portal',
    portalAccepts: false,
    register: vi.fn((accelerator: string, callback: () => void): boolean => {
      if (globalShortcut.mode === 'portal') {
        portalBindings.set(accelerator, callback);
        return true;
      }
      if (globalShortcut.taken.has(accelerator) || shortcuts.has(accelerator)) return false;
      shortcuts.set(accelerator, callback);
      return true;
    }),
    unregister: vi.fn((accelerator: string) => {
      shortcuts.delete(accelerator);
    }),
    unregisterAll: vi.fn(() => shortcuts.clear()),
    isRegistered: vi.fn(
      (accelerator: string) => shortcuts.has(accelerator) || portalBindings.has(accelerator),
    ),
    /** Test helper: the user pressed `accelerator` anywhere in the system. */
    press(accelerator: string): void {
      if (globalShortcut.mode === 'portal') {
        if (globalShortcut.portalAccepts) portalBindings.get(accelerator)?.();
        return;
      }
      shortcuts.get(accelerator)?.();
    },
  };

  const systemPreferences = {
    mediaAccess: 'not-determined' as string,
    getMediaAccessStatus: vi.fn((_type: string) => systemPreferences.mediaAccess),
    askForMediaAccess: vi.fn(async (_type: string) => true),
  };

  const Menu = {
    applicationMenu: undefined as { items: FakeMenuItem[] } | null | undefined,
    buildFromTemplate: vi.fn((items: FakeMenuItem[]) => ({ items })),
    setApplicationMenu: vi.fn((menu: { items: FakeMenuItem[] } | null) => {
      Menu.applicationMenu = menu;
    }),
  };

  return {
    app,
    globalShortcut,
    systemPreferences,
    ipcMain,
    ipcRenderer,
    contextBridge,
    BrowserWindow: FakeBrowserWindow,
    Tray: FakeTray,
    Notification: FakeNotification,
    Menu,
    nativeImage: { createFromPath: vi.fn((p: string) => ({ path: p })) },
    nativeTheme: { shouldUseDarkColors: false },
    shell: { openExternal: vi.fn(async (_url: string) => undefined) },
    dialog: {
      showOpenDialog: vi.fn(async (..._args: unknown[]) => ({
        canceled: true,
        filePaths: [] as string[],
      })),
      showErrorBox: vi.fn(),
    },
    protocol: { registerSchemesAsPrivileged: vi.fn(), handle: vi.fn() },
    session: {
      defaultSession: {
        setPermissionRequestHandler: vi.fn(),
        setPermissionCheckHandler: vi.fn(),
        setDevicePermissionHandler: vi.fn(),
      },
    },
    safeStorage: fakeSafeStorage({ isReady: () => app.ready }),
    // The desktop services' clipboard and screen (main/electron/desktop.ts).
    clipboard: fakeClipboard(),
    desktopCapturer: { getSources: vi.fn(async (_options: unknown) => [] as unknown[]) },
    screen: {
      getPrimaryDisplay: vi.fn(() => ({
        id: 1,
        size: { width: 1920, height: 1080 },
        scaleFactor: 1,
      })),
    },
  };
}

function fakeClipboard() {
  const clipboard = {
    text: '',
    readText: vi.fn(() => clipboard.text),
    writeText: vi.fn((text: string) => {
      clipboard.text = text;
    }),
  };
  return clipboard;
}

export type FakeElectron = ReturnType<typeof fakeElectron>;

/** A fake electron-log: records what reaches its transports after the hooks ran. */
export function fakeElectronLog() {
  const hooks: ((message: { data: unknown[]; level: string; date: Date }) => unknown)[] = [];
  const written: unknown[][] = [];
  const emit =
    (level: string) =>
    (...data: unknown[]): void => {
      let message: { data: unknown[]; level: string; date: Date } | false = {
        data,
        level,
        date: new Date(),
      };
      for (const hook of hooks) {
        if (!message) break;
        message = hook(message) as typeof message;
      }
      if (message) written.push(message.data);
    };
  const log = {
    hooks,
    written,
    transports: {
      file: { level: 'silly' as unknown, maxSize: 0, resolvePathFn: undefined as unknown },
      console: { level: 'silly' as unknown },
      // electron-log's IPC transport: 'silly' in development (logger.isDev), false when packaged.
      ipc: { level: 'silly' as unknown },
    },
    errorHandler: { startCatching: vi.fn() },
    error: emit('error'),
    warn: emit('warn'),
    info: emit('info'),
    debug: emit('debug'),
  };
  return { default: log, ...log };
}
