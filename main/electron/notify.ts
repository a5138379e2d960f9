/**
 * A permission prompt must be seen to be answered before it times out: when one arrives while
 * the window is hidden, minimised or in the background, raise an OS notification and bring the
 * window forward. Clicking the notification focuses the window too.
 *
 * A notification can fail where Electron cannot show it (macOS builds that are not signed,
 * Windows without a Start-menu shortcut carrying our AppUserModelID): Electron then emits
 * `failed`. The window is what the user must see, so it is brought forward again, the failure is
 * logged once, and later prompts go straight to the window.
 */
import { Notification } from 'electron';
import type { CoreApi } from '../../app/api.js';
import type { PendingPrompt } from '../../app/contract/policy.js';

export interface WindowState {
  isVisible(): boolean;
  isFocused(): boolean;
  isMinimized(): boolean;
}

export interface NotifyOptions {
  api: Pick<CoreApi, 'events'>;
  /** The window, or undefined when there is none right now. */
  getWindow: () => WindowState | undefined;
  /** Show (creating if needed), restore and focus the window. */
  showWindow: () => void;
  iconPath?: string;
  warn?: (message: string) => void;
}

export function promptTitle(prompt: Pick<PendingPrompt, 'connection' | 'service'>): string {
  return `${prompt.connection.name} wants to run ${prompt.service}`;
}

/**
 * A notification body made safe on Linux, where the notification server may read it as markup
 * (the spec's `body-markup`: `<b>`, `<a href>`, `<img>`) and Electron passes it as it is: server
 * text could restyle or hide part of what it says, and broken markup can blank it. The title is
 * plain text everywhere.
 */
export function notificationBody(
  text: string,
  platform: NodeJS.Platform = process.platform,
): string {
  if (platform !== 'linux') return text;
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/** True when the user is already looking at the window, so the in-app prompt is enough. */
export function userIsLooking(win: WindowState | undefined): boolean {
  return !!win && win.isVisible() && !win.isMinimized() && win.isFocused();
}

/** Subscribe; returns the unsubscribe function. */
export function notifyPrompts({
  api,
  getWindow,
  showWindow,
  iconPath,
  warn,
}: NotifyOptions): () => void {
  const shown = new Map<string, Notification>();
  let broken = false;
  const offPrompt = api.events.on('prompt', (prompt) => {
    if (userIsLooking(getWindow())) return;
    if (!broken && Notification.isSupported()) {
      const note = new Notification({
        title: promptTitle(prompt),
        body: notificationBody(prompt.summary),
        ...(iconPath ? { icon: iconPath } : {}),
        timeoutType: 'never',
        urgency: 'critical',
      });
      note.on('click', () => showWindow());
      note.on('close', () => shown.delete(prompt.id));
      note.on('failed', (_event, error) => {
        shown.delete(prompt.id);
        if (!broken)
          warn?.(`prompt notifications do not work here (${error}); showing the window instead`);
        broken = true;
        showWindow();
      });
      shown.set(prompt.id, note);
      note.show();
    }
    showWindow();
  });
  // An answered or expired prompt takes its notification with it.
  const offResolved = api.events.on('promptResolved', ({ id }) => {
    shown.get(id)?.close();
    shown.delete(id);
  });
  return () => {
    offPrompt();
    offResolved();
    for (const note of shown.values()) note.close();
    shown.clear();
  };
}
