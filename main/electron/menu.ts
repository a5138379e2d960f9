/**
 * The application menu of a packaged build. Electron installs a default menu at start whose View
 * menu has Reload, Force Reload and Toggle Developer Tools; on Windows and Linux the hidden menu
 * bar (autoHideMenuBar) still opens with Alt, so a user could reload the page mid-call or open
 * DevTools on the agent's window. A packaged build gets a menu without them; a development run
 * (`npm start`) keeps Electron's default, where those are wanted.
 */
import { Menu, type MenuItemConstructorOptions } from 'electron';

/** Roles a packaged build must not offer anywhere in its menu. */
export const DEVELOPER_ROLES: ReadonlySet<string> = new Set([
  'reload',
  'forceReload',
  'toggleDevTools',
  'viewMenu',
]);

/**
 * macOS needs an app menu and the Edit menu for Cmd+C/V/X/A to work in text fields; Windows and
 * Linux need only File (Quit) and Edit (Chromium handles the editing keys itself, the menu makes
 * them discoverable), and Window for minimise/close.
 */
export function appMenuTemplate(platform: NodeJS.Platform): MenuItemConstructorOptions[] {
  if (platform === 'darwin')
    return [{ role: 'appMenu' }, { role: 'editMenu' }, { role: 'windowMenu' }];
  return [{ role: 'fileMenu' }, { role: 'editMenu' }, { role: 'windowMenu' }];
}

/** Packaged builds: our menu instead of Electron's default. Call after `ready`. */
export function installAppMenu(packaged: boolean, platform: NodeJS.Platform): void {
  if (!packaged) return;
  Menu.setApplicationMenu(Menu.buildFromTemplate(appMenuTemplate(platform)));
}
