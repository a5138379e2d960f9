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

export class FakeBrowserWindow extends EventEmitter {
  static instances: FakeBrowserWindow[] = [];
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
  loadURL = vi.fn(async (url: string) => {
    this.loadedUrl = url;
    this.webContents.url = url;
    this.webContents.mainFrame.url = url;
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
  }
}

export class FakeTray extends EventEmitter {
  static instances: FakeTray[] = [];
  tooltip = '';
  menu:
    { items: { id?: string; label?: string; enabled?: boolean; click?: () => void }[] } | undefined;
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
  item(id: string): { id?: string; label?: string; enabled?: boolean; click?: () => void } {
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

export interface FakeSafeStorage {
  isEncryptionAvailable: () => boolean;
  encryptString: (plain: string) => Buffer;
  decryptString: (cipher: Buffer) => string;
  getSelectedStorageBackend: () => string;
}

/** "Encrypts" by reversing the UTF-8 bytes and XOR-ing them: no plaintext byte survives. */
export function fakeSafeStorage(overrides: Partial<FakeSafeStorage> = {}): FakeSafeStorage {
  const flip = (b: Buffer): Buffer => Buffer.from([...b].reverse().map((x) => x ^ 0x5a));
  return {
    isEncryptionAvailable: () => true,
    encryptString: (plain) =>
      Buffer.concat([Buffer.from('FAKE'), flip(Buffer.from(plain, 'utf8'))]),
    decryptString: (cipher) => {
      if (cipher.subarray(0, 4).toString() !== 'FAKE')
        throw new Error(
          'Error while decrypting the ciphertext provided to safeStorage.decryptString.',
        );
      return flip(cipher.subarray(4)).toString('utf8');
    },
    getSelectedStorageBackend: () => 'gnome_libsecret',
    ...overrides,
  };
}

export function fakeElectron() {
  FakeBrowserWindow.instances = [];
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

  const app = Object.assign(new EventEmitter(), {
    isPackaged: false,
    paths: {} as Record<string, string>,
    requestSingleInstanceLock: vi.fn(() => true),
    enableSandbox: vi.fn(),
    setAppUserModelId: vi.fn(),
    getPath: vi.fn((name: string) => {
      const p = app.paths[name];
      if (!p) throw new Error(`no fake path for ${name}`);
      return p;
    }),
    getVersion: vi.fn(() => '0.1.0-test'),
    whenReady: vi.fn(async () => undefined),
    quit: vi.fn(),
    exit: vi.fn(),
  });

  /** Accelerators registered by this app; `taken` ones belong to "another app" and fail. */
  const shortcuts = new Map<string, () => void>();
  const globalShortcut = {
    registered: shortcuts,
    taken: new Set<string>(),
    register: vi.fn((accelerator: string, callback: () => void): boolean => {
      if (globalShortcut.taken.has(accelerator) || shortcuts.has(accelerator)) return false;
      shortcuts.set(accelerator, callback);
      return true;
    }),
    unregister: vi.fn((accelerator: string) => {
      shortcuts.delete(accelerator);
    }),
    unregisterAll: vi.fn(() => shortcuts.clear()),
    isRegistered: vi.fn((accelerator: string) => shortcuts.has(accelerator)),
    /** Test helper: the user pressed `accelerator` anywhere in the system. */
    press(accelerator: string): void {
      shortcuts.get(accelerator)?.();
    },
  };

  const systemPreferences = {
    mediaAccess: 'not-determined' as string,
    getMediaAccessStatus: vi.fn((_type: string) => systemPreferences.mediaAccess),
    askForMediaAccess: vi.fn(async (_type: string) => true),
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
    Menu: { buildFromTemplate: vi.fn((items: unknown[]) => ({ items })) },
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
    safeStorage: fakeSafeStorage(),
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
    },
    errorHandler: { startCatching: vi.fn() },
    error: emit('error'),
    warn: emit('warn'),
    info: emit('info'),
    debug: emit('debug'),
  };
  return { default: log, ...log };
}
