/**
 * Guarded IPC (DESIGN §4). Every channel the renderer can call goes through `handle()`, which
 * refuses anything but our own page's main frame and never throws across the boundary: callers
 * get `{ok:true, value}` or `{ok:false, error:{code, message, params}}`. Contract commands go
 * through the one contract server (app/serve.ts), which checks names and arguments first.
 */
import {
  type BrowserWindow,
  type IpcMainInvokeEvent,
  type OpenDialogOptions,
  dialog,
  ipcMain,
} from 'electron';
import type { CommandError } from '../../app/contract/commands.js';
import type { AgentNotice } from '../../app/contract/notice.js';
import {
  type ContractServer,
  type ServedApi,
  commandErrorOf,
  serveContract,
} from '../../app/serve.js';
import { MicrophoneAccess } from './microphone.js';
import { isOwnOrigin, originOf } from './origin.js';
import { PushToTalkShortcut, type ShortcutBackend, unconfirmedShortcutNotice } from './shortcut.js';

export const INVOKE_CHANNEL = 'agent:invoke';
export const EVENT_CHANNEL = 'agent:event';
export const PICK_FOLDER_CHANNEL = 'agent:pickFolder';
/** Renderer → main: set (or, with null, turn off) the global push-to-talk shortcut. */
export const SET_SHORTCUT_CHANNEL = 'agent:setShortcut';
/** Main → window: the global push-to-talk shortcut was pressed (a toggle: no key-up exists). */
export const SHORTCUT_CHANNEL = 'agent:shortcut';
/** Renderer → main: ask the system for microphone access (macOS; true elsewhere). */
export const ASK_MICROPHONE_CHANNEL = 'agent:askMicrophone';

export type IpcReply = { ok: true; value: unknown } | { ok: false; error: CommandError };

/** A refusal with a stable code, thrown inside a handler and turned into `{ok:false}` by handle(). */
export class CommandFailure extends Error {
  constructor(
    readonly code: CommandError['code'],
    message: string,
    readonly params?: CommandError['params'],
  ) {
    super(message);
    this.name = 'CommandFailure';
  }
}

type SenderEvent = Pick<IpcMainInvokeEvent, 'sender' | 'senderFrame'>;

/** Why a sender may not call us, or undefined when it is our page's main frame. */
export function senderRefusal(event: SenderEvent): string | undefined {
  let frame: IpcMainInvokeEvent['senderFrame'];
  try {
    frame = event.senderFrame;
  } catch {
    frame = null;
  }
  if (!frame) return 'the calling frame is gone';
  if (frame.parent !== null || frame !== event.sender.mainFrame)
    return 'only the main frame of the app window may call the agent';
  if (!isOwnOrigin(frame.url))
    return `calls from ${originOf(frame.url) ?? 'an unknown origin'} are not allowed`;
  return undefined;
}

function errorMessage(err: unknown): string {
  if (err instanceof Error && err.message) return err.message;
  return typeof err === 'string' && err ? err : 'the command failed';
}

/** The one guarded handler. `fn` gets the caller's arguments only after the sender passed. */
export function handle(
  channel: string,
  fn: (...args: unknown[]) => unknown,
  onRefused?: (message: string) => void,
): () => void {
  ipcMain.handle(channel, async (event, ...args: unknown[]): Promise<IpcReply> => {
    const refusal = senderRefusal(event);
    if (refusal) {
      onRefused?.(`${channel}: ${refusal}`);
      return { ok: false, error: { code: 'forbidden', message: refusal } };
    }
    try {
      return { ok: true, value: await fn(...args) };
    } catch (err) {
      if (err instanceof CommandFailure)
        return {
          ok: false,
          error: { code: err.code, message: errorMessage(err), params: err.params },
        };
      return { ok: false, error: commandErrorOf(err) };
    }
  });
  return () => ipcMain.removeHandler(channel);
}

/** Our page in `win`, ready to receive: not destroyed and still on our origin. */
function receiver(win: BrowserWindow | undefined): BrowserWindow['webContents'] | undefined {
  if (!win || win.isDestroyed()) return undefined;
  const contents = win.webContents;
  if (contents.isDestroyed() || !isOwnOrigin(contents.getURL())) return undefined;
  return contents;
}

/**
 * The contract served to the window: calls checked and run by the one contract server, every
 * event forwarded to our page (ArrayBuffers travel by structured clone). Prompt answering follows
 * the window's own lifetime (attachWindow), not this channel's.
 */
export function serveWindow(
  api: ServedApi,
  getWindow: () => BrowserWindow | undefined,
  onError?: (message: string) => void,
): ContractServer {
  return serveContract(api, {
    name: 'window',
    answersPrompts: false,
    send(name, payload) {
      const contents = receiver(getWindow());
      if (!contents) return;
      try {
        contents.send(EVENT_CHANNEL, name, payload);
      } catch (err) {
        onError?.(`could not send the '${name}' event to the window: ${errorMessage(err)}`);
      }
    },
  });
}

/** The window answers permission prompts while it exists (closing it cancels pending ones). */
export function attachWindow(api: Pick<ServedApi, 'attachUi'>, win: BrowserWindow): () => void {
  const detach = api.attachUi('window');
  let attached = true;
  const release = (): void => {
    if (!attached) return;
    attached = false;
    detach();
  };
  win.once('closed', release);
  return release;
}

export async function pickFolder(win: BrowserWindow | undefined): Promise<string | null> {
  const options: OpenDialogOptions = {
    title: 'Choose a folder',
    properties: ['openDirectory', 'createDirectory'],
  };
  const result =
    win && !win.isDestroyed()
      ? await dialog.showOpenDialog(win, options)
      : await dialog.showOpenDialog(options);
  return result.canceled ? null : (result.filePaths[0] ?? null);
}

/** A press of the global shortcut, sent to our page only (the same rule as events). */
export function sendShortcut(
  getWindow: () => BrowserWindow | undefined,
  onError?: (message: string) => void,
): void {
  const contents = receiver(getWindow());
  if (!contents) return;
  try {
    contents.send(SHORTCUT_CHANNEL, 'talk');
  } catch (err) {
    onError?.(`could not send the shortcut to the window: ${errorMessage(err)}`);
  }
}

export interface IpcHost {
  api: ServedApi;
  getWindow: () => BrowserWindow | undefined;
  warn?: (message: string) => void;
  /** Defaults to process.platform; tests pass another. */
  platform?: NodeJS.Platform;
  /** How global shortcuts are bound here (shortcutBackend()); `system` when not given. */
  shortcutBackend?: ShortcutBackend;
  /** Tell the user something (the host shows it as a notice in the window). */
  notice?: (notice: AgentNotice) => void;
}

/** Register every channel and event forwarder; returns the function that removes them. */
export function wireIpc({
  api,
  getWindow,
  warn,
  platform,
  shortcutBackend,
  notice,
}: IpcHost): () => void {
  const shortcut = new PushToTalkShortcut(() => sendShortcut(getWindow, warn), shortcutBackend);
  // Said once per accelerator: the page sets the remembered shortcut again on every start.
  let toldUnconfirmed: string | null = null;
  const microphone = new MicrophoneAccess(platform);
  const server = serveWindow(api, getWindow, warn);
  const disposers = [
    handle(
      INVOKE_CHANNEL,
      async (method, ...args) => {
        const reply = await server.call(method, args);
        if (reply.ok) return reply.value;
        throw new CommandFailure(reply.error.code, reply.error.message, reply.error.params);
      },
      warn,
    ),
    handle(PICK_FOLDER_CHANNEL, () => pickFolder(getWindow()), warn),
    handle(
      SET_SHORTCUT_CHANNEL,
      (accelerator) => {
        const result = shortcut.set(accelerator);
        if (!result.ok) throw new CommandFailure(result.code, result.error);
        if (!result.confirmed && result.accelerator && result.accelerator !== toldUnconfirmed) {
          toldUnconfirmed = result.accelerator;
          notice?.(unconfirmedShortcutNotice(result.accelerator));
        }
        return result.accelerator;
      },
      warn,
    ),
    handle(ASK_MICROPHONE_CHANNEL, () => microphone.ask(), warn),
    () => server.dispose(),
    // Unwired on quit (host.ts shutdown): the shortcut goes back to the system.
    () => shortcut.clear(),
  ];
  return () => disposers.forEach((dispose) => dispose());
}
