import * as electronModule from 'electron';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CoreApi } from '../../../app/api.js';
import { MemorySecretStore } from '../../../app/settings/secrets.js';
import {
  EVENT_CHANNEL,
  INVOKE_CHANNEL,
  type IpcReply,
  PICK_FOLDER_CHANNEL,
  attachWindow,
  senderRefusal,
  wireIpc,
} from '../../../main/electron/ipc.js';
import { type FakeElectron, type FakeFrame, FakeBrowserWindow } from './fake-electron.js';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));
const electron = electronModule as unknown as FakeElectron;

let dir: string;
let api: CoreApi;
let win: FakeBrowserWindow;
let unwire: () => void;

const OWN = 'app://advent/index.html';

function frame(url: string, parent: FakeFrame | null = null): FakeFrame {
  return { url, parent };
}

/** An IpcMainInvokeEvent from `senderFrame` in a window whose main frame is `mainFrame`. */
function eventFrom(senderFrame: FakeFrame | null, mainFrame: FakeFrame | null = senderFrame) {
  return { sender: { mainFrame }, senderFrame };
}

async function call(channel: string, event: unknown, ...args: unknown[]): Promise<IpcReply> {
  const fn = electron.ipcMain.handlers.get(channel);
  if (!fn) throw new Error(`no handler for ${channel}`);
  return (await fn(event, ...args)) as IpcReply;
}

const own = (): ReturnType<typeof eventFrom> => {
  const main = frame(OWN);
  return eventFrom(main, main);
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'advent-ipc-'));
  api = await CoreApi.open({
    dataDir: path.join(dir, 'data'),
    defaultFilesRoot: path.join(dir, 'files'),
    secrets: new MemorySecretStore(),
    host: 'electron',
    version: '9.9.9-test',
  });
});

afterAll(async () => {
  unwire?.();
  try {
    await api?.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

beforeEach(() => {
  unwire?.();
  win = new FakeBrowserWindow({});
  void win.loadURL(OWN);
  win.webContents.send.mockClear();
  unwire = wireIpc({ api, getWindow: () => win as unknown as Electron.BrowserWindow });
});

describe('the guarded handle()', () => {
  it('a good call reaches the api and returns its value', async () => {
    const reply = await call(INVOKE_CHANNEL, own(), 'getSettings');
    expect(reply).toMatchObject({
      ok: true,
      value: { host: 'electron', dataDir: path.join(dir, 'data') },
    });
    const snap = await call(INVOKE_CHANNEL, own(), 'snapshot');
    expect(snap).toMatchObject({ ok: true, value: { version: '9.9.9-test' } });
  });

  it('a call from another origin is forbidden and never reaches the api', async () => {
    const spy = vi.spyOn(api, 'getSettings');
    for (const url of [
      'https://evil.example/',
      'file:///srv/x.html',
      'app://other/index.html',
      'about:blank',
      '',
    ]) {
      const reply = await call(INVOKE_CHANNEL, eventFrom(frame(url)), 'getSettings');
      expect(reply, url).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    }
    expect(spy).not.toHaveBeenCalled();
    spy.mockRestore();
  });

  it('a call from a subframe is forbidden, even of our own origin', async () => {
    const main = frame(OWN);
    const child = frame(OWN, main);
    expect(await call(INVOKE_CHANNEL, eventFrom(child, main), 'getSettings')).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    // A frame claiming to be top-level but that is not the window's main frame.
    expect(await call(INVOKE_CHANNEL, eventFrom(frame(OWN), main), 'getSettings')).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
  });

  it('a call whose frame is gone is forbidden', async () => {
    expect(await call(INVOKE_CHANNEL, eventFrom(null, frame(OWN)), 'snapshot')).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    const throwing = {
      sender: { mainFrame: null },
      get senderFrame(): never {
        throw new Error('disposed');
      },
    };
    expect(await call(INVOKE_CHANNEL, throwing, 'snapshot')).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
  });

  it.each(['eval', 'close', 'attachUi', 'constructor', '__proto__', 'toString', 42, null])(
    'an unknown method %s is refused as unknown_command',
    async (method) => {
      expect(await call(INVOKE_CHANNEL, own(), method)).toMatchObject({
        ok: false,
        error: { code: 'unknown_command' },
      });
    },
  );

  it.each([
    ['sendText', [42]],
    ['sendText', ['']],
    ['snapshot', ['extra']],
    ['connect', []],
    ['setServiceEnabled', ['create_file', 'yes']],
    ['answerPrompt', ['p1', 'forever']],
    ['voiceChunk', ['not bytes']],
    ['saveSettings', [{ filesRoots: ['/x'], evil: true }]],
  ])('bad arguments to %s are refused as invalid_args', async (method, args) => {
    const reply = await call(INVOKE_CHANNEL, own(), method, ...args);
    expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_args' } });
  });

  it("the core's refusal keeps its stable code and params; any other throw is 'failed'", async () => {
    const reply = await call(INVOKE_CHANNEL, own(), 'connect', 'nope');
    expect(reply).toEqual({
      ok: false,
      error: {
        code: 'unknown_connection',
        message: "there is no connection 'nope'",
        params: { id: 'nope' },
      },
    });
    const spy = vi.spyOn(api, 'verifyAudit').mockRejectedValueOnce(new Error('disk gone'));
    expect(await call(INVOKE_CHANNEL, own(), 'verifyAudit')).toMatchObject({
      ok: false,
      error: { code: 'failed', message: 'disk gone' },
    });
    spy.mockRestore();
  });

  it('never throws across IPC, even for a non-Error rejection', async () => {
    const spy = vi.spyOn(api, 'verifyAudit').mockRejectedValueOnce('plain string');
    expect(await call(INVOKE_CHANNEL, own(), 'verifyAudit')).toEqual({
      ok: false,
      error: { code: 'failed', message: 'plain string' },
    });
    spy.mockRestore();
  });
});

describe('events to the window', () => {
  it('forwards every contract event on agent:event', async () => {
    await call(INVOKE_CHANNEL, own(), 'saveSettings', { promptTimeoutSec: 30 });
    expect(win.webContents.send).toHaveBeenCalledWith(
      EVENT_CHANNEL,
      'settings',
      expect.objectContaining({ promptTimeoutSec: 30 }),
    );
  });

  it('passes audio PCM as an ArrayBuffer that survives structured clone', () => {
    const pcm = new Int16Array([1, -2, 3, -4]).buffer;
    api.events.emit('audio', { connection: 'c', taskId: 't', seq: 1, sampleRate: 16000, pcm });
    const sent = win.webContents.send.mock.calls.find((c) => c[1] === 'audio');
    const payload = sent?.[2] as { pcm: ArrayBuffer };
    expect(payload.pcm).toBeInstanceOf(ArrayBuffer);
    const cloned = structuredClone(payload);
    expect([...new Int16Array(cloned.pcm)]).toEqual([1, -2, 3, -4]);
  });

  it('sends nothing to a window that left our origin or is gone', () => {
    win.webContents.url = 'https://evil.example/';
    api.events.emit('notice', { level: 'info', message: 'hello' });
    win.webContents.url = OWN;
    win.destroyed = true;
    api.events.emit('notice', { level: 'info', message: 'hello' });
    expect(win.webContents.send).not.toHaveBeenCalled();
  });

  it('stops forwarding and handling once unwired', async () => {
    unwire();
    api.events.emit('notice', { level: 'info', message: 'late' });
    expect(win.webContents.send).not.toHaveBeenCalled();
    expect(electron.ipcMain.handlers.has(INVOKE_CHANNEL)).toBe(false);
    unwire = () => undefined;
  });
});

describe('window as prompt answerer', () => {
  it('attaches while the window exists and detaches when it closes', () => {
    const detach = vi.fn();
    const attach = vi.spyOn(api, 'attachUi').mockReturnValue(detach);
    const w = new FakeBrowserWindow({});
    attachWindow(api, w as unknown as Electron.BrowserWindow);
    expect(attach).toHaveBeenCalledWith('window');
    expect(detach).not.toHaveBeenCalled();
    w.close();
    expect(detach).toHaveBeenCalledTimes(1);
    attach.mockRestore();
  });
});

describe('agent:pickFolder', () => {
  it('returns the chosen folder, or null when cancelled', async () => {
    electron.dialog.showOpenDialog.mockResolvedValueOnce({
      canceled: false,
      filePaths: ['/srv/u/Notes'],
    });
    expect(await call(PICK_FOLDER_CHANNEL, own())).toEqual({ ok: true, value: '/srv/u/Notes' });
    expect(electron.dialog.showOpenDialog).toHaveBeenLastCalledWith(
      win,
      expect.objectContaining({ properties: expect.arrayContaining(['openDirectory']) }),
    );
    expect(await call(PICK_FOLDER_CHANNEL, own())).toEqual({ ok: true, value: null });
  });

  it('is guarded like every other channel', async () => {
    electron.dialog.showOpenDialog.mockClear();
    expect(
      await call(PICK_FOLDER_CHANNEL, eventFrom(frame('https://evil.example/'))),
    ).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    expect(electron.dialog.showOpenDialog).not.toHaveBeenCalled();
  });
});

describe('senderRefusal', () => {
  it('explains each refusal in words', () => {
    expect(senderRefusal(own() as never)).toBeUndefined();
    expect(senderRefusal(eventFrom(frame('https://evil.example/x')) as never)).toMatch(
      /https:\/\/evil\.example/,
    );
  });
});
