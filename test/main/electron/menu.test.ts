import * as electronModule from 'electron';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { DEVELOPER_ROLES, appMenuTemplate, installAppMenu } from '../../../main/electron/menu.js';
import type { FakeElectron, FakeMenuItem } from './fake-electron.js';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));
const electron = electronModule as unknown as FakeElectron;

function roles(items: readonly FakeMenuItem[]): string[] {
  return items.flatMap((i) => [...(i.role ? [i.role] : []), ...roles(i.submenu ?? [])]);
}

beforeEach(() => {
  electron.Menu.setApplicationMenu.mockClear();
});

// Menu.setApplicationMenu (electron.d.ts): "The default menu will be created automatically if the
// app does not set one. It contains standard items such as File, Edit, View, and Window"; its View
// menu (menu-item.md, role `viewMenu`) holds Reload, Force Reload and Toggle Developer Tools, and on
// Windows and Linux an auto-hidden menu bar still opens with Alt.
describe('the packaged app menu', () => {
  it.each(['win32', 'linux', 'darwin'] as const)(
    'on %s has no Reload, DevTools or View menu anywhere',
    (platform) => {
      const template = appMenuTemplate(platform) as FakeMenuItem[];
      const used = roles(template);
      for (const role of used) expect(DEVELOPER_ROLES.has(role), role).toBe(false);
      // Copy and paste stay (macOS needs the Edit menu for Cmd+C/V in text fields).
      expect(used).toContain('editMenu');
      expect(used).toContain('windowMenu');
    },
  );

  it('macOS keeps its app menu (About, Hide, Quit)', () => {
    expect(roles(appMenuTemplate('darwin') as FakeMenuItem[])[0]).toBe('appMenu');
  });

  it('is installed in packaged builds only', () => {
    installAppMenu(false, 'linux');
    expect(electron.Menu.setApplicationMenu).not.toHaveBeenCalled();
    installAppMenu(true, 'linux');
    expect(electron.Menu.setApplicationMenu).toHaveBeenCalledTimes(1);
    const installed = electron.Menu.applicationMenu;
    expect(roles(installed?.items ?? [])).toEqual(['fileMenu', 'editMenu', 'windowMenu']);
  });
});
