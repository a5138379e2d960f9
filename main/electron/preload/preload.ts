/**
 * The sandboxed preload: the page's only door to the agent, `window.agent`. Compiled to CommonJS
 * (tsconfig.preload.json) because sandboxed preloads cannot load ES modules, and it may require
 * nothing but 'electron'. So the contract's name lists are copied here as plain strings instead of
 * imported; test/main/electron/preload.test.ts proves they equal COMMAND_NAMES and EVENT_NAMES.
 */
import { contextBridge, ipcRenderer } from 'electron';

export const COMMAND_NAMES: readonly string[] = [
  'snapshot',
  'connect',
  'disconnect',
  'setActiveConnection',
  'saveConnection',
  'deleteConnection',
  'setSecret',
  'startDemo',
  'sendText',
  'speak',
  'voiceStart',
  'voiceChunk',
  'voiceEnd',
  'voiceCancel',
  'setServiceEnabled',
  'setServicePolicy',
  'revokeGrants',
  'setOffer',
  'answerPrompt',
  'runService',
  'queryAudit',
  'exportAudit',
  'verifyAudit',
  'getSettings',
  'saveSettings',
  'listMcpServers',
  'saveMcpServer',
  'removeMcpServer',
  'setMcpServerEnabled',
  'trustMcpServer',
  'setMcpServerPolicy',
  'restartMcpServer',
  'readMcpLog',
  'listMcpImportSources',
  'previewMcpImport',
  'confirmMcpImport',
  'listMcpClients',
  'previewMcpClientSetup',
  'applyMcpClientSetup',
  'listReminders',
  'cancelReminder',
  'answerScreen',
  'resetMcpHttpToken',
];

export const EVENT_NAMES: readonly string[] = [
  'connection',
  'connectionRemoved',
  'chat',
  'audio',
  'mood',
  'listen',
  'services',
  'prompt',
  'promptResolved',
  'audit',
  'notice',
  'settings',
  'mcpServer',
  'mcpServerRemoved',
  'reminders',
  'reminder',
  'screenRequest',
  'screenRequestDone',
  'mcpHttp',
];

/** Channel names: the same strings as main/electron/ipc.ts (checked by the same test). */
export const INVOKE_CHANNEL = 'agent:invoke';
export const EVENT_CHANNEL = 'agent:event';
export const PICK_FOLDER_CHANNEL = 'agent:pickFolder';
export const SET_SHORTCUT_CHANNEL = 'agent:setShortcut';
export const SHORTCUT_CHANNEL = 'agent:shortcut';
export const ASK_MICROPHONE_CHANNEL = 'agent:askMicrophone';

const commands: ReadonlySet<string> = new Set(COMMAND_NAMES);
const events: ReadonlySet<string> = new Set(EVENT_NAMES);

/** A stable code from the contract (the page knows the list; here only its form is checked). */
export type AgentErrorCode = string;
const CODE_FORM = /^[a-z][a-z_]{0,39}$/;

/**
 * What a failed call rejects with. A plain object on purpose: contextBridge copies only the
 * message of an Error thrown across it and drops every other property, so an Error would lose the
 * code; a plain object arrives in the page with both.
 */
export interface AgentFailure {
  name: 'AgentError';
  code: AgentErrorCode;
  message: string;
  /** Values for the page's translated sentence (strings and numbers only). */
  params: Record<string, string | number>;
}

function failure(
  code: AgentErrorCode,
  message: string,
  params: Record<string, string | number> = {},
): AgentFailure {
  return { name: 'AgentError', code, message, params };
}

/** Only plain string/number values cross: a reply must not smuggle objects into the page. */
function plainParams(value: unknown): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  if (!value || typeof value !== 'object') return out;
  for (const [k, v] of Object.entries(value).slice(0, 20))
    if (typeof v === 'string' || typeof v === 'number') out[k] = v;
  return out;
}

/** `{ok:true, value}` → value; `{ok:false, error}` → rejection; anything else is a failure too. */
function unwrap(reply: unknown): unknown {
  if (reply && typeof reply === 'object') {
    const r = reply as {
      ok?: unknown;
      value?: unknown;
      error?: { code?: unknown; message?: unknown; params?: unknown };
    };
    if (r.ok === true) return r.value;
    if (r.ok === false) {
      const code = CODE_FORM.test(String(r.error?.code)) ? String(r.error?.code) : 'failed';
      const message = typeof r.error?.message === 'string' ? r.error.message : 'the command failed';
      throw failure(code, message, plainParams(r.error?.params));
    }
  }
  throw failure('failed', 'the agent sent a reply this window does not understand');
}

type Listener = (payload: unknown) => void;
const listeners = new Map<string, Set<Listener>>();

// One IPC listener for all events, fanned out here: page code never sees the IPC event object
// (its `sender` would be a handle into the isolated world).
ipcRenderer.on(EVENT_CHANNEL, (_event, name: unknown, payload: unknown) => {
  if (typeof name !== 'string') return;
  for (const cb of [...(listeners.get(name) ?? [])]) {
    try {
      cb(payload);
    } catch (err) {
      console.error(`window.agent listener for '${name}' failed:`, err);
    }
  }
});

const shortcutListeners = new Set<() => void>();

// The global push-to-talk shortcut (a toggle): the page gets a bare call, no IPC event object.
ipcRenderer.on(SHORTCUT_CHANNEL, () => {
  for (const cb of [...shortcutListeners]) {
    try {
      cb();
    } catch (err) {
      console.error('window.agent shortcut listener failed:', err);
    }
  }
});

export const agent = {
  /** Call a contract command; names outside the contract are refused before any IPC. */
  async invoke(method: string, ...args: unknown[]): Promise<unknown> {
    if (typeof method !== 'string' || !commands.has(method))
      throw failure('unknown_command', `unknown command ${JSON.stringify(String(method))}`);
    return unwrap(await ipcRenderer.invoke(INVOKE_CHANNEL, method, ...args));
  },

  /** Subscribe to a contract event; returns the unsubscribe function. */
  on(event: string, cb: (payload: unknown) => void): () => void {
    if (typeof event !== 'string' || !events.has(event))
      throw new Error(`unknown event ${JSON.stringify(String(event))}`);
    if (typeof cb !== 'function') throw new TypeError('a listener must be a function');
    let set = listeners.get(event);
    if (!set) {
      set = new Set();
      listeners.set(event, set);
    }
    const own = set;
    // A wrapper per subscription, so subscribing the same function twice needs two unsubscribes.
    const listener: Listener = (payload) => cb(payload);
    own.add(listener);
    return () => {
      own.delete(listener);
    };
  },

  /** The OS folder picker (Settings → files roots); null when the user cancels. */
  async pickFolder(): Promise<string | null> {
    const value = unwrap(await ipcRenderer.invoke(PICK_FOLDER_CHANNEL));
    return typeof value === 'string' ? value : null;
  },

  /**
   * Register the global push-to-talk shortcut (an Electron accelerator), or turn it off with
   * null; resolves to what is registered, rejects with why not (invalid, or taken elsewhere).
   */
  async setShortcut(accelerator: string | null): Promise<string | null> {
    if (accelerator !== null && typeof accelerator !== 'string')
      throw failure('invalid_args', 'a shortcut must be a string or null');
    const value = unwrap(await ipcRenderer.invoke(SET_SHORTCUT_CHANNEL, accelerator));
    return typeof value === 'string' ? value : null;
  },

  /** Each press of the global shortcut (key-down only: a toggle); returns the unsubscribe. */
  onShortcut(cb: () => void): () => void {
    if (typeof cb !== 'function') throw new TypeError('a listener must be a function');
    const listener = (): void => cb();
    shortcutListeners.add(listener);
    return () => {
      shortcutListeners.delete(listener);
    };
  },

  /** Ask the system for microphone access (macOS asks once; elsewhere always true). */
  async askMicrophone(): Promise<boolean> {
    return unwrap(await ipcRenderer.invoke(ASK_MICROPHONE_CHANNEL)) === true;
  },
};

contextBridge.exposeInMainWorld('agent', agent);
