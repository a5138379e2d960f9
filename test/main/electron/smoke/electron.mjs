// @ts-check
/**
 * A recording stand-in for the `electron` module, for running the BUILT main bundle under plain
 * Node (test/main/electron/smoke.test.ts). It is written to Electron 45's documented contracts and
 * refuses what Electron refuses, so an ordering mistake in the bundle fails here as it would there:
 *
 * - app.md: `ready` is emitted once, after the main script's first turn; `app.enableSandbox()` and
 *   `protocol.registerSchemesAsPrivileged()` ("can only be used before the ready event ... and can
 *   be called only once") must come before it; BrowserWindow, Tray, session, globalShortcut and
 *   safeStorage work only after it ("Cannot create BrowserWindow before app is ready").
 * - protocol.md: `protocol.handle(scheme, handler)` answers a GlobalRequest with a GlobalResponse.
 *   A window's `loadURL` of that scheme fetches the page through the handler, then its scripts and
 *   styles; web-contents.md: loadURL resolves on did-finish-load and rejects on did-fail-load.
 * - sandboxed preloads (tutorial/sandbox.md) get a `require` that knows `electron` (contextBridge,
 *   ipcRenderer) and a few Node built-ins only; every IPC message is copied by structured clone.
 * - app.quit() (browser.cc): before-quit (preventDefault cancels), close every window, will-quit,
 *   quit, then the process exits.
 *
 * Everything observable is appended as JSON lines to $ADVENT_SMOKE_RECORD. With
 * ADVENT_SMOKE_DRIVE=1 the fake also plays the user: once the window is shown it calls
 * `window.agent.invoke('snapshot')` through the preload, then quits the app.
 */
import { EventEmitter } from 'node:events';
import { appendFileSync, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';

const RECORD = process.env.ADVENT_SMOKE_RECORD ?? '';
const HOME = process.env.ADVENT_SMOKE_HOME ?? '';
const DRIVE = process.env.ADVENT_SMOKE_DRIVE === '1';

/** @param {string} type @param {Record<string, unknown>} [data] */
function record(type, data = {}) {
  if (RECORD) appendFileSync(RECORD, `${JSON.stringify({ ...data, type })}\n`);
}

/** @param {unknown} err */
function errorText(err) {
  return err instanceof Error ? err.message : String(err);
}

// What Electron's main process looks like to code that checks (electron-log does).
Object.defineProperty(process.versions, 'electron', { value: '45.4.1', enumerable: true });
Object.defineProperty(process, 'type', { value: 'browser', enumerable: true });
// A packaged app: the app lives in <resources>/app.asar, icons beside it.
const appPath = path.resolve(process.argv[1] ?? '', '..', '..', '..', '..');
Object.defineProperty(process, 'resourcesPath', {
  value: path.dirname(appPath),
  enumerable: true,
});
const appPackage = JSON.parse(readFileSync(path.join(appPath, 'package.json'), 'utf8'));
// A packaged app's argv is [exe, ...the user's arguments]: the script node was given is not one.
process.argv.splice(1, 1);

// A watchdog, so a hang is a recorded failure rather than a stuck test.
setTimeout(() => {
  record('timeout');
  process.exit(3);
}, 12_000).unref();

let ready = false;
/** @param {string} what */
function requireReady(what) {
  if (!ready) throw new Error(`${what} cannot be used before the app is ready`);
}

// --- app ----------------------------------------------------------------------------------------

const switches = new Map();
class App extends EventEmitter {
  isPackaged = true;
  name = appPackage.productName ?? appPackage.name;
  commandLine = {
    /** @param {string} name */
    hasSwitch: (name) => switches.has(name),
    /** @param {string} name */
    getSwitchValue: (name) => switches.get(name) ?? '',
    /** @param {string} name @param {string} [value] */
    appendSwitch: (name, value = '') => void switches.set(name, value),
  };
  #quitting = false;
  #quitted = false;
  requestSingleInstanceLock() {
    record('app.requestSingleInstanceLock');
    return true;
  }
  enableSandbox() {
    if (ready) throw new Error('app.enableSandbox() can only be called before app is ready');
    record('app.enableSandbox');
  }
  /** @param {string} id */
  setAppUserModelId(id) {
    record('app.setAppUserModelId', { id });
  }
  /** @param {string} name */
  getPath(name) {
    const known = {
      home: HOME,
      appData: path.join(HOME, '.config'),
      userData: path.join(HOME, '.config', this.name),
      logs: path.join(HOME, '.config', this.name, 'logs'),
      temp: path.join(HOME, 'tmp'),
    };
    const found = /** @type {Record<string, string>} */ (known)[name];
    if (!found) throw new Error(`Failed to get '${name}' path`);
    return found;
  }
  getVersion() {
    return appPackage.version;
  }
  getAppPath() {
    return appPath;
  }
  getName() {
    return this.name;
  }
  isReady() {
    return ready;
  }
  whenReady() {
    return ready ? Promise.resolve() : new Promise((resolve) => this.once('ready', resolve));
  }
  quit() {
    if (this.#quitting || this.#quitted) return;
    record('app.quit');
    const event = preventable();
    this.emit('before-quit', event);
    if (event.defaultPrevented) return record('before-quit prevented');
    this.#quitting = true;
    for (const win of BrowserWindow.getAllWindows()) {
      win.close();
      if (!win.isDestroyed()) {
        this.#quitting = false;
        return record('quit cancelled by a window');
      }
    }
    this.emit('will-quit', preventable());
    this.emit('quit', preventable(), 0);
    this.#quitted = true;
    record('quit');
    process.exit(0);
  }
  /** @param {number} [code] */
  exit(code = 0) {
    record('app.exit', { code });
    process.exit(code);
  }
  get quitting() {
    return this.#quitting;
  }
}

function preventable() {
  const event = {
    defaultPrevented: false,
    preventDefault() {
      event.defaultPrevented = true;
    },
  };
  return event;
}

export const app = new App();

// `ready` after the main script's first turn (lib/browser/init.ts loads it, then the browser
// finishes launching).
setImmediate(() => {
  ready = true;
  record('ready');
  app.emit('ready', preventable(), {});
});

// --- protocol -----------------------------------------------------------------------------------

/** @type {Map<string, (request: Request) => Promise<Response> | Response>} */
const handlers = new Map();
let privilegedRegistered = false;
export const protocol = {
  /** @param {{scheme: string, privileges?: Record<string, unknown>}[]} schemes */
  registerSchemesAsPrivileged(schemes) {
    if (ready)
      throw new Error('protocol.registerSchemesAsPrivileged should be called before app is ready');
    if (privilegedRegistered)
      throw new Error('protocol.registerSchemesAsPrivileged can be called only once');
    privilegedRegistered = true;
    record('protocol.registerSchemesAsPrivileged', { schemes });
  },
  /** @param {string} scheme @param {(request: Request) => Promise<Response> | Response} handler */
  handle(scheme, handler) {
    requireReady('protocol');
    if (handlers.has(scheme)) throw new Error(`The scheme "${scheme}" is already handled`);
    handlers.set(scheme, handler);
    record('protocol.handle', { scheme });
  },
};

/** @param {string} url */
async function fetchThroughProtocol(url) {
  const scheme = new URL(url).protocol.slice(0, -1);
  const handler = handlers.get(scheme);
  if (!handler)
    throw Object.assign(new Error(`ERR_UNKNOWN_URL_SCHEME (-302) loading '${url}'`), {
      code: 'ERR_UNKNOWN_URL_SCHEME',
      errno: -302,
    });
  return handler(new Request(url));
}

// --- IPC ----------------------------------------------------------------------------------------

/** @type {Map<string, (event: unknown, ...args: unknown[]) => unknown>} */
const invokeHandlers = new Map();
/** @type {Map<string, Function[]>} */
const mainListeners = new Map();
export const ipcMain = {
  /** @param {string} channel @param {(event: unknown, ...args: unknown[]) => unknown} fn */
  handle(channel, fn) {
    if (invokeHandlers.has(channel))
      throw new Error(`Attempted to register a second handler for '${channel}'`);
    invokeHandlers.set(channel, fn);
  },
  /** @param {string} channel */
  removeHandler(channel) {
    invokeHandlers.delete(channel);
  },
  /** @param {string} channel @param {Function} fn */
  on(channel, fn) {
    mainListeners.set(channel, [...(mainListeners.get(channel) ?? []), fn]);
    return ipcMain;
  },
  /** @param {string} channel @param {Function} fn */
  removeListener(channel, fn) {
    mainListeners.set(
      channel,
      (mainListeners.get(channel) ?? []).filter((f) => f !== fn),
    );
    return ipcMain;
  },
  /** @param {string} [channel] */
  removeAllListeners(channel) {
    if (channel === undefined) mainListeners.clear();
    else mainListeners.delete(channel);
    return ipcMain;
  },
};

/** The channels anyone in a renderer could reach now. */
function openChannels() {
  return {
    handle: [...invokeHandlers.keys()].sort(),
    on: [...mainListeners]
      .filter(([, fns]) => fns.length > 0)
      .map(([c]) => c)
      .sort(),
  };
}

// --- windows ------------------------------------------------------------------------------------

let nextId = 1;
class WebContents extends EventEmitter {
  id = nextId++;
  #url = '';
  #destroyed = false;
  /** @type {((details: {url: string}) => {action: string}) | undefined} */
  windowOpenHandler;
  mainFrame = { url: '', parent: null, frameTreeNodeId: 1 };
  /** @type {Map<string, Function[]>} the page side's ipcRenderer listeners */
  rendererListeners = new Map();
  getURL() {
    return this.#url;
  }
  /** @param {string} url */
  setURL(url) {
    this.#url = url;
    this.mainFrame.url = url;
  }
  isDestroyed() {
    return this.#destroyed;
  }
  destroy() {
    this.#destroyed = true;
  }
  /** @param {(details: {url: string}) => {action: string}} handler */
  setWindowOpenHandler(handler) {
    this.windowOpenHandler = handler;
  }
  /** @param {string} channel @param {...unknown} args */
  send(channel, ...args) {
    if (this.#destroyed) throw new Error('Object has been destroyed');
    const copied = structuredClone(args);
    for (const fn of this.rendererListeners.get(channel) ?? []) fn({ sender: 'ipc' }, ...copied);
  }
}

/** @type {BrowserWindow[]} */
const windows = [];
export class BrowserWindow extends EventEmitter {
  static getAllWindows() {
    return windows.filter((w) => !w.isDestroyed());
  }
  #visible = false;
  #destroyed = false;
  /** @param {Record<string, any>} options */
  constructor(options = {}) {
    super();
    if (!ready) throw new Error('Cannot create BrowserWindow before app is ready');
    this.options = options;
    this.webContents = new WebContents();
    windows.push(this);
    const prefs = options.webPreferences ?? {};
    record('BrowserWindow', {
      options: { ...options, webPreferences: { ...prefs } },
      preloadExists: typeof prefs.preload === 'string' && existsSync(prefs.preload),
      preloadAbsolute: typeof prefs.preload === 'string' && path.isAbsolute(prefs.preload),
    });
    app.emit('web-contents-created', preventable(), this.webContents);
    record('web-contents hardened', {
      windowOpenHandler: typeof this.webContents.windowOpenHandler === 'function',
      listens: [
        'will-navigate',
        'will-redirect',
        'will-frame-navigate',
        'will-attach-webview',
      ].filter((e) => this.webContents.listenerCount(e) > 0),
    });
  }
  /** @param {string} url */
  async loadURL(url) {
    record('loadURL', { url: url.startsWith('data:') ? 'data:…' : url });
    try {
      if (url.startsWith('data:')) {
        this.webContents.setURL(url);
        this.webContents.emit('did-finish-load');
        return;
      }
      await loadPage(this, url);
    } catch (err) {
      const { code = 'ERR_FAILED', errno = -2 } = /** @type {any} */ (err);
      record('did-fail-load', { url, reason: errorText(err) });
      this.webContents.emit('did-fail-load', preventable(), errno, code, url, true, 0, 0);
      throw err;
    }
    this.webContents.emit('did-finish-load');
    record('did-finish-load', { url });
    this.emit('ready-to-show');
  }
  show() {
    if (this.#destroyed) return;
    this.#visible = true;
    record('window.show', {
      url: this.webContents.getURL().startsWith('data:') ? 'data:…' : this.webContents.getURL(),
    });
    this.emit('show');
    if (DRIVE) setImmediate(() => void drive(this));
  }
  hide() {
    this.#visible = false;
    this.emit('hide');
  }
  focus() {}
  restore() {}
  isVisible() {
    return this.#visible;
  }
  isFocused() {
    return this.#visible;
  }
  isMinimized() {
    return false;
  }
  isDestroyed() {
    return this.#destroyed;
  }
  close() {
    if (this.#destroyed) return;
    const event = preventable();
    this.emit('close', event);
    if (event.defaultPrevented) return;
    this.#destroyed = true;
    this.webContents.destroy();
    this.emit('closed');
    record('window.closed');
    if (!app.quitting && BrowserWindow.getAllWindows().length === 0) app.emit('window-all-closed');
  }
}

/** Fetch a page through its scheme's handler, run the preload, then fetch what the page loads. */
async function loadPage(/** @type {BrowserWindow} */ win, /** @type {string} */ url) {
  const response = await fetchThroughProtocol(url);
  const type = response.headers.get('content-type') ?? '';
  record('page', {
    url,
    status: response.status,
    mime: type,
    csp: response.headers.get('content-security-policy'),
  });
  if (response.status !== 200 || !type.startsWith('text/html'))
    throw Object.assign(new Error(`ERR_FILE_NOT_FOUND (-6) loading '${url}'`), {
      code: 'ERR_FILE_NOT_FOUND',
      errno: -6,
    });
  const html = await response.text();
  win.webContents.setURL(url);
  runPreload(win);
  for (const match of html.matchAll(/<(script|link)\b[^>]*?\b(?:src|href)="([^"]+)"/g)) {
    const [, tag, ref] = match;
    if (!ref || ref.startsWith('data:')) continue;
    const sub = new URL(ref, url).href;
    const res = await fetchThroughProtocol(sub);
    record('subresource', {
      tag,
      url: sub,
      status: res.status,
      mime: res.headers.get('content-type'),
    });
    if (res.status !== 200)
      throw Object.assign(new Error(`ERR_FILE_NOT_FOUND (-6) loading '${sub}'`), {
        code: 'ERR_FILE_NOT_FOUND',
        errno: -6,
      });
  }
}

/** The page's world: what contextBridge exposed. */
const mainWorld = /** @type {Record<string, any>} */ ({});

/**
 * A sandboxed preload: its own context, a `require` that knows only what Electron's sandbox
 * offers, and the renderer's electron module.
 */
function runPreload(/** @type {BrowserWindow} */ win) {
  const preload = win.options.webPreferences?.preload;
  const source = readFileSync(preload, 'utf8');
  const contents = win.webContents;
  const renderer = {
    contextBridge: {
      /** @param {string} key @param {unknown} api */
      exposeInMainWorld(key, api) {
        mainWorld[key] = api;
        record('contextBridge.exposeInMainWorld', {
          key,
          members: Object.keys(/** @type {object} */ (api)).sort(),
        });
      },
    },
    ipcRenderer: {
      /** @param {string} channel @param {...unknown} args */
      async invoke(channel, ...args) {
        const handler = invokeHandlers.get(channel);
        if (!handler)
          throw new Error(
            `Error invoking remote method '${channel}': Error: No handler registered for '${channel}'`,
          );
        const event = {
          sender: contents,
          senderFrame: contents.mainFrame,
          frameId: 1,
          processId: 1,
        };
        return structuredClone(await handler(event, ...structuredClone(args)));
      },
      /** @param {string} channel @param {Function} fn */
      on(channel, fn) {
        contents.rendererListeners.set(channel, [
          ...(contents.rendererListeners.get(channel) ?? []),
          fn,
        ]);
      },
    },
  };
  const allowed = new Set(['electron', 'events', 'timers', 'url']);
  /** @param {string} name */
  const sandboxRequire = (name) => {
    if (!allowed.has(name)) throw new Error(`module not found: ${name}`);
    return name === 'electron' ? renderer : undefined;
  };
  const module = { exports: {} };
  const wrapper = vm.runInNewContext(
    `(function (exports, require, module, __filename, __dirname) {${source}\n})`,
    { console },
    { filename: preload },
  );
  wrapper(module.exports, sandboxRequire, module, preload, path.dirname(preload));
  record('preload ran', { file: path.relative(appPath, preload) });
}

/** The user: talk to the agent through window.agent, then quit. */
async function drive(/** @type {BrowserWindow} */ win) {
  if (drive.done) return;
  drive.done = true;
  try {
    const snapshot = await mainWorld.agent.invoke('snapshot');
    record('snapshot', {
      version: snapshot.version,
      host: snapshot.settings?.host,
      secrets: snapshot.settings?.secrets?.kind,
      connections: snapshot.connections?.length,
    });
  } catch (err) {
    record('snapshot failed', { error: errorText(err?.message ?? err) });
  }
  // Every file the renderer ships, through the scheme handler: the type each is served with.
  const root = path.join(appPath, 'dist', 'renderer');
  /** @param {string} dir @returns {string[]} */
  const walk = (dir) =>
    readdirSync(dir).flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory() ? walk(full) : [full];
    });
  for (const file of walk(root)) {
    const url = `app://advent/${path.relative(root, file).split(path.sep).join('/')}`;
    const res = await fetchThroughProtocol(url);
    record('served', {
      path: path.relative(root, file),
      status: res.status,
      mime: res.headers.get('content-type'),
    });
  }
  record('open channels', openChannels());
  record('application menu', { roles: applicationMenuRoles() });
  void win;
  app.quit();
}
drive.done = false;

// --- the rest of the main-process API the host touches ------------------------------------------

/** @type {{items: any[]} | null | undefined} */
let applicationMenu;
function applicationMenuRoles() {
  /** @param {any[]} items @returns {string[]} */
  const roles = (items) =>
    items.flatMap((i) => [...(i.role ? [i.role] : []), ...roles(i.submenu ?? [])]);
  return applicationMenu ? roles(applicationMenu.items) : null;
}
export const Menu = {
  /** @param {any[]} items */
  buildFromTemplate: (items) => ({ items }),
  /** @param {{items: any[]} | null} menu */
  setApplicationMenu(menu) {
    applicationMenu = menu;
    record('Menu.setApplicationMenu', { roles: applicationMenuRoles() });
  },
  getApplicationMenu: () => applicationMenu ?? null,
};

export const nativeImage = {
  /** @param {string} file */
  createFromPath: (file) => ({ path: file, isEmpty: () => !existsSync(file) }),
};

export class Tray extends EventEmitter {
  /** @param {{path: string, isEmpty(): boolean}} image */
  constructor(image) {
    super();
    requireReady('Tray');
    record('Tray', {
      image: path.relative(process.resourcesPath, image.path),
      empty: image.isEmpty(),
    });
  }
  /** @param {string} text */
  setToolTip(text) {
    record('tray.setToolTip', { text });
  }
  setContextMenu() {}
  destroy() {
    record('tray.destroy');
  }
}

export class Notification extends EventEmitter {
  static isSupported() {
    return false;
  }
}

export const nativeTheme = { shouldUseDarkColors: false };
export const shell = { openExternal: async () => undefined };
export const dialog = {
  /** @param {string} title @param {string} content */
  showErrorBox(title, content) {
    record('dialog.showErrorBox', { title, content });
  },
  showOpenDialog: async () => ({ canceled: true, filePaths: [] }),
};

export const session = {
  get defaultSession() {
    requireReady('session');
    return defaultSession;
  },
};
const defaultSession = {
  /** @param {unknown} handler */
  setPermissionRequestHandler(handler) {
    record('session.setPermissionRequestHandler', { set: typeof handler === 'function' });
  },
  /** @param {unknown} handler */
  setPermissionCheckHandler(handler) {
    record('session.setPermissionCheckHandler', { set: typeof handler === 'function' });
  },
  /** @param {unknown} handler */
  setDevicePermissionHandler(handler) {
    record('session.setDevicePermissionHandler', { set: typeof handler === 'function' });
  },
};

export const globalShortcut = {
  register: () => {
    requireReady('globalShortcut');
    return true;
  },
  unregister: () => undefined,
  unregisterAll: () => undefined,
  isRegistered: () => false,
};

export const systemPreferences = {
  getMediaAccessStatus: () => 'granted',
  askForMediaAccess: async () => true,
};

/** An OS keyring that works (gnome_libsecret), reached through the async API only. */
export const safeStorage = {
  isAsyncEncryptionAvailable: async () => ready,
  /** @param {string} text */
  encryptStringAsync: async (text) => {
    requireReady('safeStorage');
    return Buffer.concat([Buffer.from('v11'), Buffer.from(text, 'utf8').reverse()]);
  },
  /** @param {Buffer} cipher */
  decryptStringAsync: async (cipher) => {
    requireReady('safeStorage');
    return {
      shouldReEncrypt: false,
      result: Buffer.from(cipher.subarray(3)).reverse().toString('utf8'),
    };
  },
  getSelectedStorageBackend: () => (ready ? 'gnome_libsecret' : 'unknown'),
  setUsePlainTextEncryption: () => undefined,
  isEncryptionAvailable() {
    throw new Error('the deprecated sync safeStorage API was used');
  },
  encryptString() {
    throw new Error('the deprecated sync safeStorage API was used');
  },
  decryptString() {
    throw new Error('the deprecated sync safeStorage API was used');
  },
};

/**
 * utilityProcess (docs/api/utility-process.md): `fork()` is only allowed after `ready`. The smoke
 * run starts no MCP server, so a fork here is recorded and refused as Electron would before ready.
 */
export const utilityProcess = {
  /** @param {string} modulePath */
  fork(modulePath) {
    requireReady('utilityProcess');
    record('utilityProcess.fork', { modulePath });
    throw new Error('the smoke run starts no utility process');
  },
};

/** clipboard works before ready; screen and desktopCapturer only after it (screen.md). */
let clipboardText = '';
export const clipboard = {
  readText: () => clipboardText,
  /** @param {string} text */
  writeText: (text) => void (clipboardText = text),
};
export const screen = {
  getPrimaryDisplay() {
    requireReady('screen');
    return { id: 1, size: { width: 1280, height: 800 }, scaleFactor: 1 };
  },
};
export const desktopCapturer = {
  getSources: async () => {
    requireReady('desktopCapturer');
    return [];
  },
};

// No contextBridge or ipcRenderer here: in the main process Electron's module has neither (code
// such as electron-log's preload tests `electron.ipcRenderer` to know where it runs).

export default {
  app,
  protocol,
  ipcMain,
  BrowserWindow,
  Menu,
  nativeImage,
  Tray,
  Notification,
  nativeTheme,
  shell,
  dialog,
  session,
  globalShortcut,
  systemPreferences,
  safeStorage,
  utilityProcess,
  clipboard,
  screen,
  desktopCapturer,
};
