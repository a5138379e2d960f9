/**
 * The tray icon: the connection state at a glance (tooltip and the first menu line), Show/Hide
 * window, whether closing the window keeps the agent running here, and Quit. The state follows the
 * api's `connection` events, so it is right even while the window is hidden.
 */
import { Menu, type MenuItemConstructorOptions, Tray, nativeImage } from 'electron';
import type { CoreApi } from '../../app/api.js';
import type { ConnectionView } from '../../app/contract/commands.js';

/** One line for every connection together: the ready one the user talks to wins. */
export function connectionLabel(views: readonly ConnectionView[]): string {
  const ready = views.filter((v) => v.state.status === 'ready');
  const main = ready.find((v) => v.active) ?? ready[0];
  if (main) {
    const more = ready.length > 1 ? ` (+${ready.length - 1})` : '';
    return `Connected to ${main.profile.name}${more}`;
  }
  if (views.some((v) => v.state.status === 'reconnecting')) return 'Reconnecting…';
  if (views.some((v) => v.state.status === 'connecting' || v.state.status === 'authenticating'))
    return 'Connecting…';
  return 'Offline';
}

export interface TrayOptions {
  api: Pick<CoreApi, 'events'>;
  /** Connections as they are now (events only report changes from here on). */
  initial?: readonly ConnectionView[];
  iconPath: string;
  isWindowVisible: () => boolean;
  showWindow: () => void;
  hideWindow: () => void;
  quit: () => void;
  /**
   * Closing the window hides it to the tray. Offered in the tray's own menu: on Linux the icon
   * may never appear (no StatusNotifier host), and only someone who sees it can turn this on.
   */
  keepInTray?: { get(): boolean; set(value: boolean): void };
}

export interface AppTray {
  readonly label: string;
  /** Rebuild the menu (the window was shown or hidden). */
  refresh(): void;
  destroy(): void;
}

export function createTray(options: TrayOptions): AppTray {
  const { api, isWindowVisible, showWindow, hideWindow, quit, keepInTray } = options;
  const views = new Map<string, ConnectionView>(
    (options.initial ?? []).map((v) => [v.profile.id, v]),
  );
  const image = nativeImage.createFromPath(options.iconPath);
  const tray = new Tray(image);
  let label = connectionLabel([]);

  const toggle = (): void => (isWindowVisible() ? hideWindow() : showWindow());

  const refresh = (): void => {
    label = connectionLabel([...views.values()]);
    tray.setToolTip(`Advent Agent — ${label}`);
    const template: MenuItemConstructorOptions[] = [
      { id: 'status', label, enabled: false },
      { type: 'separator' },
      { id: 'toggle', label: isWindowVisible() ? 'Hide window' : 'Show window', click: toggle },
      ...(keepInTray
        ? [
            {
              id: 'keepInTray',
              label: 'Keep running when the window is closed',
              type: 'checkbox' as const,
              checked: keepInTray.get(),
              // Electron flips `checked` before calling click.
              click: (item: { checked: boolean }) => keepInTray.set(item.checked),
            },
          ]
        : []),
      { type: 'separator' },
      { id: 'quit', label: 'Quit Advent Agent', click: () => quit() },
    ];
    tray.setContextMenu(Menu.buildFromTemplate(template));
  };

  const offs = [
    api.events.on('connection', (view) => {
      views.set(view.profile.id, view);
      refresh();
    }),
    api.events.on('connectionRemoved', ({ id }) => {
      views.delete(id);
      refresh();
    }),
  ];
  // Windows and most Linux trays: a click toggles the window (macOS opens the menu instead).
  tray.on('click', toggle);
  refresh();

  return {
    get label() {
      return label;
    },
    refresh,
    destroy() {
      offs.forEach((off) => off());
      tray.destroy();
    },
  };
}
