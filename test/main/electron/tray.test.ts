import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { ConnectionView, EventPayloads } from '../../../app/contract/commands.js';
import type { ConnectionState } from '../../../app/contract/connection.js';
import { Emitter } from '../../../app/events.js';
import { trayIconPath } from '../../../main/electron/paths.js';
import { connectionLabel, createTray } from '../../../main/electron/tray.js';
import { FakeTray } from './fake-electron.js';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));

function view(id: string, name: string, state: ConnectionState, active = false): ConnectionView {
  return {
    profile: { id, kind: 'advent', name, host: 'h', port: 1, hasToken: true, address: 'h:1' },
    state,
    active,
    capabilities: { chat: true, voice: true, speak: true },
  };
}

const READY: ConnectionState = { status: 'ready', since: 1 };
const RECONNECTING: ConnectionState = {
  status: 'reconnecting',
  attempt: 2,
  nextAt: 5,
  lastError: 'reset',
};
const OFFLINE: ConnectionState = { status: 'offline', reason: 'stopped', message: 'stopped' };

describe('connectionLabel', () => {
  it.each([
    ['nothing configured', [], 'Offline'],
    ['idle', [view('a', 'Home', { status: 'idle' })], 'Offline'],
    ['offline', [view('a', 'Home', OFFLINE)], 'Offline'],
    ['ready', [view('a', 'Home', READY)], 'Connected to Home'],
    ['reconnecting', [view('a', 'Home', RECONNECTING)], 'Reconnecting…'],
    ['connecting', [view('a', 'Home', { status: 'connecting', attempt: 1 })], 'Connecting…'],
    ['authenticating', [view('a', 'Home', { status: 'authenticating' })], 'Connecting…'],
    [
      'one ready among others',
      [view('a', 'Home', RECONNECTING), view('b', 'Office', READY)],
      'Connected to Office',
    ],
    [
      'several ready: the active one named',
      [view('a', 'Home', READY), view('b', 'Office', READY, true)],
      'Connected to Office (+1)',
    ],
  ])('%s → %s', (_name, views, label) => {
    expect(connectionLabel(views as ConnectionView[])).toBe(label);
  });
});

describe('createTray', () => {
  function setup() {
    const events = new Emitter<EventPayloads>();
    let visible = true;
    const showWindow = vi.fn(() => (visible = true));
    const hideWindow = vi.fn(() => (visible = false));
    const quit = vi.fn();
    const tray = createTray({
      api: { events } as never,
      iconPath: '/r/tray.png',
      isWindowVisible: () => visible,
      showWindow,
      hideWindow,
      quit,
    });
    const fake = FakeTray.instances.at(-1);
    if (!fake) throw new Error('no tray created');
    return { events, tray, fake, showWindow, hideWindow, quit };
  }

  it('shows the connection state in the tooltip and the first menu line', () => {
    const { events, tray, fake } = setup();
    expect(fake.tooltip).toBe('Advent Agent — Offline');
    events.emit('connection', view('a', 'Home', { status: 'connecting', attempt: 1 }));
    expect(fake.item('status').label).toBe('Connecting…');
    events.emit('connection', view('a', 'Home', READY));
    expect(fake.tooltip).toBe('Advent Agent — Connected to Home');
    expect(fake.item('status')).toMatchObject({ label: 'Connected to Home', enabled: false });
    events.emit('connection', view('a', 'Home', RECONNECTING));
    expect(tray.label).toBe('Reconnecting…');
    events.emit('connectionRemoved', { id: 'a' });
    expect(fake.tooltip).toBe('Advent Agent — Offline');
  });

  it('toggles the window and quits from the menu', () => {
    const { tray, fake, showWindow, hideWindow, quit } = setup();
    expect(fake.item('toggle').label).toBe('Hide window');
    fake.click('toggle');
    expect(hideWindow).toHaveBeenCalled();
    tray.refresh();
    expect(fake.item('toggle').label).toBe('Show window');
    fake.click('toggle');
    expect(showWindow).toHaveBeenCalled();
    fake.emit('click');
    expect(hideWindow).toHaveBeenCalledTimes(2);
    fake.click('quit');
    expect(quit).toHaveBeenCalled();
  });

  it('starts from the connections that already exist', () => {
    createTray({
      api: { events: new Emitter<EventPayloads>() } as never,
      initial: [view('a', 'Home', READY)],
      iconPath: '/r/tray.png',
      isWindowVisible: () => false,
      showWindow: () => undefined,
      hideWindow: () => undefined,
      quit: () => undefined,
    });
    expect(FakeTray.instances.at(-1)?.tooltip).toBe('Advent Agent — Connected to Home');
  });

  it('offers "keep running when the window is closed" as a checkbox in its own menu', () => {
    let keep = false;
    const set = vi.fn((value: boolean) => (keep = value));
    createTray({
      api: { events: new Emitter<EventPayloads>() } as never,
      iconPath: '/r/trayLinux.png',
      isWindowVisible: () => true,
      showWindow: () => undefined,
      hideWindow: () => undefined,
      quit: () => undefined,
      keepInTray: { get: () => keep, set },
    });
    const fake = FakeTray.instances.at(-1);
    expect(fake?.item('keepInTray')).toMatchObject({ type: 'checkbox', checked: false });
    fake?.click('keepInTray');
    expect(set).toHaveBeenLastCalledWith(true);
    expect(keep).toBe(true);
  });

  it('uses a 24 px image on Linux, where 16 px ones are scaled into a blur', () => {
    const resources = path.resolve(import.meta.dirname, '..', '..', '..', 'resources');
    const file = trayIconPath(resources, 'linux');
    const png = readFileSync(file);
    // IHDR: width and height at bytes 16–23 of a PNG.
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([24, 24]);
    expect(trayIconPath(resources, 'win32')).toBe(path.join(resources, 'tray.png'));
    expect(trayIconPath(resources, 'darwin')).toBe(path.join(resources, 'trayTemplate.png'));
  });

  it('stops listening and removes the icon when destroyed', () => {
    const { events, tray, fake } = setup();
    tray.destroy();
    expect(fake.destroyed).toBe(true);
    expect(events.listenerCount('connection')).toBe(0);
  });
});
