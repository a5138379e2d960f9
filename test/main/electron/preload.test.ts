import * as electronModule from 'electron';
import { describe, expect, it, vi } from 'vitest';
import {
  COMMAND_NAMES as CONTRACT_COMMANDS,
  EVENT_NAMES as CONTRACT_EVENTS,
} from '../../../app/contract/commands.js';
import * as ipc from '../../../main/electron/ipc.js';
import * as preload from '../../../main/electron/preload/preload.js';
import type { FakeElectron } from './fake-electron.js';

vi.mock('electron', () => import('./fake-electron.js').then((m) => m.fakeElectron()));
const electron = electronModule as unknown as FakeElectron;

type Agent = typeof preload.agent;
const exposed = (): Agent => electron.contextBridge.exposed.agent as Agent;

describe('preload name lists', () => {
  // The preload cannot import the contract (a sandboxed CommonJS preload requires only
  // 'electron'), so it keeps copies; these assertions are what stops them drifting.
  it('has exactly the contract command names', () => {
    expect([...preload.COMMAND_NAMES]).toEqual([...CONTRACT_COMMANDS]);
  });

  it('has exactly the contract event names', () => {
    expect([...preload.EVENT_NAMES]).toEqual([...CONTRACT_EVENTS]);
  });

  it('uses the channels main listens on', () => {
    expect(preload.INVOKE_CHANNEL).toBe(ipc.INVOKE_CHANNEL);
    expect(preload.EVENT_CHANNEL).toBe(ipc.EVENT_CHANNEL);
    expect(preload.PICK_FOLDER_CHANNEL).toBe(ipc.PICK_FOLDER_CHANNEL);
    expect(preload.SET_SHORTCUT_CHANNEL).toBe(ipc.SET_SHORTCUT_CHANNEL);
    expect(preload.SHORTCUT_CHANNEL).toBe(ipc.SHORTCUT_CHANNEL);
    expect(preload.ASK_MICROPHONE_CHANNEL).toBe(ipc.ASK_MICROPHONE_CHANNEL);
  });
});

describe('window.agent', () => {
  it('is exposed through contextBridge as "agent", with only the contract calls and host extras', () => {
    expect(electron.contextBridge.exposeInMainWorld).toHaveBeenCalledWith(
      'agent',
      expect.any(Object),
    );
    expect(Object.keys(exposed()).sort()).toEqual([
      'askMicrophone',
      'invoke',
      'on',
      'onShortcut',
      'pickFolder',
      'setShortcut',
    ]);
  });

  it('invoke refuses names outside the contract before any IPC', async () => {
    electron.ipcRenderer.invoke.mockClear();
    for (const name of ['eval', 'attachUi', 'close', '__proto__', 'constructor']) {
      await expect(exposed().invoke(name)).rejects.toMatchObject({
        code: 'unknown_command',
        message: expect.stringContaining(name),
      });
    }
    await expect(exposed().invoke(42 as unknown as string)).rejects.toMatchObject({
      code: 'unknown_command',
    });
    expect(electron.ipcRenderer.invoke).not.toHaveBeenCalled();
  });

  it('invoke sends a contract call and unwraps {ok:true, value}', async () => {
    electron.ipcRenderer.invoke.mockResolvedValueOnce({ ok: true, value: { taskId: 't1' } });
    await expect(exposed().invoke('sendText', 'hello')).resolves.toEqual({ taskId: 't1' });
    expect(electron.ipcRenderer.invoke).toHaveBeenLastCalledWith(
      'agent:invoke',
      'sendText',
      'hello',
    );
  });

  it('invoke rejects {ok:false} with its code and message', async () => {
    electron.ipcRenderer.invoke.mockResolvedValueOnce({
      ok: false,
      error: { code: 'invalid_args', message: 'sendText: invalid arguments' },
    });
    await expect(exposed().invoke('sendText', 42)).rejects.toEqual({
      name: 'AgentError',
      code: 'invalid_args',
      message: 'sendText: invalid arguments',
      params: {},
    });
    // A refusal's params cross as plain strings and numbers only.
    electron.ipcRenderer.invoke.mockResolvedValueOnce({
      ok: false,
      error: {
        code: 'needs_token',
        message: "no token is saved for 'Home'",
        params: { name: 'Home', n: 2, evil: { toString: 1 } },
      },
    });
    await expect(exposed().invoke('connect', 'p1')).rejects.toEqual({
      name: 'AgentError',
      code: 'needs_token',
      message: "no token is saved for 'Home'",
      params: { name: 'Home', n: 2 },
    });
    // The page knows the contract's codes (it maps unknown ones to 'failed'); the preload only
    // lets well-formed ones through.
    electron.ipcRenderer.invoke.mockResolvedValueOnce({
      ok: false,
      error: { code: 'weird', message: 7 },
    });
    await expect(exposed().invoke('snapshot')).rejects.toMatchObject({
      code: 'weird',
      message: 'the command failed',
    });
    electron.ipcRenderer.invoke.mockResolvedValueOnce({
      ok: false,
      error: { code: 'Not A Code <script>', message: 'x' },
    });
    await expect(exposed().invoke('snapshot')).rejects.toMatchObject({ code: 'failed' });
    electron.ipcRenderer.invoke.mockResolvedValueOnce('garbage');
    await expect(exposed().invoke('snapshot')).rejects.toMatchObject({ code: 'failed' });
  });

  it('on refuses unknown events and delivers known ones until unsubscribed', () => {
    expect(() => exposed().on('secrets', () => undefined)).toThrow(/unknown event/);
    expect(() => exposed().on('chat', 'nope' as unknown as () => void)).toThrow(TypeError);

    const chat = vi.fn();
    const notice = vi.fn();
    const offChat = exposed().on('chat', chat);
    exposed().on('notice', notice);
    electron.ipcRenderer.deliver('agent:event', 'chat', { id: 'm1' });
    electron.ipcRenderer.deliver('agent:event', 'notice', { message: 'hi' });
    electron.ipcRenderer.deliver('agent:event', 'unknownEvent', { x: 1 });
    expect(chat).toHaveBeenCalledWith({ id: 'm1' });
    expect(notice).toHaveBeenCalledWith({ message: 'hi' });
    // The page's callback gets the payload only, never the IPC event object.
    expect(chat.mock.calls[0]).toHaveLength(1);

    offChat();
    electron.ipcRenderer.deliver('agent:event', 'chat', { id: 'm2' });
    expect(chat).toHaveBeenCalledTimes(1);
  });

  it('uses a single IPC listener however many subscriptions the page makes', () => {
    for (let i = 0; i < 20; i++) exposed().on('audio', () => undefined);
    expect(electron.ipcRenderer.listeners.get('agent:event')).toHaveLength(1);
  });

  it('a throwing page listener does not stop the others', () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const after = vi.fn();
    exposed().on('mood', () => {
      throw new Error('page bug');
    });
    exposed().on('mood', after);
    electron.ipcRenderer.deliver('agent:event', 'mood', { emoji: '🙂' });
    expect(after).toHaveBeenCalled();
    error.mockRestore();
  });

  it('pickFolder returns the chosen path or null', async () => {
    electron.ipcRenderer.invoke.mockResolvedValueOnce({ ok: true, value: '/srv/u/Notes' });
    await expect(exposed().pickFolder()).resolves.toBe('/srv/u/Notes');
    expect(electron.ipcRenderer.invoke).toHaveBeenLastCalledWith('agent:pickFolder');
    electron.ipcRenderer.invoke.mockResolvedValueOnce({ ok: true, value: null });
    await expect(exposed().pickFolder()).resolves.toBeNull();
  });

  it('setShortcut sends the accelerator (or null) and returns what main registered', async () => {
    electron.ipcRenderer.invoke.mockResolvedValueOnce({ ok: true, value: 'Alt+Space' });
    await expect(exposed().setShortcut('Alt+Space')).resolves.toBe('Alt+Space');
    expect(electron.ipcRenderer.invoke).toHaveBeenLastCalledWith('agent:setShortcut', 'Alt+Space');
    electron.ipcRenderer.invoke.mockResolvedValueOnce({ ok: true, value: null });
    await expect(exposed().setShortcut(null)).resolves.toBeNull();
    electron.ipcRenderer.invoke.mockResolvedValueOnce({
      ok: false,
      error: { code: 'failed', message: 'taken by another app' },
    });
    await expect(exposed().setShortcut('Ctrl+K')).rejects.toMatchObject({
      code: 'failed',
      message: 'taken by another app',
    });
    electron.ipcRenderer.invoke.mockClear();
    await expect(exposed().setShortcut(42 as unknown as string)).rejects.toMatchObject({
      code: 'invalid_args',
    });
    expect(electron.ipcRenderer.invoke).not.toHaveBeenCalled();
  });

  it('onShortcut calls back on each press, without the IPC event, until unsubscribed', () => {
    const cb = vi.fn();
    const off = exposed().onShortcut(cb);
    electron.ipcRenderer.deliver('agent:shortcut', 'talk');
    expect(cb).toHaveBeenCalledTimes(1);
    expect(cb.mock.calls[0]).toHaveLength(0);
    off();
    electron.ipcRenderer.deliver('agent:shortcut', 'talk');
    expect(cb).toHaveBeenCalledTimes(1);
    expect(() => exposed().onShortcut('x' as unknown as () => void)).toThrow(TypeError);
    expect(electron.ipcRenderer.listeners.get('agent:shortcut')).toHaveLength(1);
  });

  it('askMicrophone returns main’s answer as a boolean', async () => {
    electron.ipcRenderer.invoke.mockResolvedValueOnce({ ok: true, value: false });
    await expect(exposed().askMicrophone()).resolves.toBe(false);
    expect(electron.ipcRenderer.invoke).toHaveBeenLastCalledWith('agent:askMicrophone');
    electron.ipcRenderer.invoke.mockResolvedValueOnce({ ok: true, value: true });
    await expect(exposed().askMicrophone()).resolves.toBe(true);
  });
});
