import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Capture, VoiceEngine } from '../../renderer/audio/shared.js';
import { VoiceController } from '../../renderer/features/voice/controller.js';
import {
  DEFAULT_SHORTCUT,
  type ShortcutHost,
  applyShortcut,
  checkAccelerator,
  shortcutHost,
  shortcutPref,
  shortcutStartProblem,
  startShortcut,
} from '../../renderer/features/voice/shortcut.js';
import { useVoice } from '../../renderer/store/voice.js';
import { fakeBridge } from './fake-bridge.js';
import { FakeClock } from '../helpers/fake-clock.js';

/** A Map-backed localStorage on globalThis (the tests run under Node, no DOM). */
function fakeStorage() {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (k: string) => items.get(k) ?? null,
    setItem: (k: string, v: string) => void items.set(k, v),
    removeItem: (k: string) => void items.delete(k),
  };
}

const g = globalThis as unknown as { localStorage?: unknown; agent?: unknown };
let storage: ReturnType<typeof fakeStorage>;

beforeEach(() => {
  storage = fakeStorage();
  g.localStorage = storage;
});
afterEach(() => {
  delete g.localStorage;
  delete g.agent;
});

function fakeHost(taken: string[] = []) {
  let press: (() => void) | undefined;
  const host = {
    setShortcut: vi.fn(async (accel: string | null) => {
      if (accel && taken.includes(accel))
        throw { name: 'AgentError', code: 'failed', message: `${accel} is taken by another app` };
      return accel;
    }),
    onShortcut: vi.fn((cb: () => void) => {
      press = cb;
      return () => {
        press = undefined;
      };
    }),
  } satisfies ShortcutHost;
  return { host, press: () => press?.() };
}

describe('checkAccelerator (renderer)', () => {
  it.each([DEFAULT_SHORTCUT, 'Alt+Shift+K', 'Ctrl+/', 'F9', 'MediaPlayPause', 'Cmd+Plus'])(
    'accepts %s',
    (accel) => expect(checkAccelerator(accel)).toEqual({ ok: true, accelerator: accel }),
  );

  it.each([
    null,
    42,
    '',
    'A',
    'Space',
    'Ctrl+',
    'Ctrl+Shift',
    'Ctrl+Ä',
    'Ctrl A',
    'Ctrl+A\n',
    'Hyper+A',
    'Alt+Alt+A',
    'Ctrl+Foo',
    `Ctrl+${'x'.repeat(80)}`,
  ])('refuses %j', (accel) => {
    expect(checkAccelerator(accel).ok).toBe(false);
  });
});

describe('shortcutPref', () => {
  it('defaults to CommandOrControl+Shift+Space, remembers a choice and "off"', () => {
    expect(shortcutPref.get()).toBe(DEFAULT_SHORTCUT);
    shortcutPref.set('Alt+F9');
    expect(shortcutPref.get()).toBe('Alt+F9');
    shortcutPref.set(null);
    expect(shortcutPref.get()).toBeNull();
    shortcutPref.set(DEFAULT_SHORTCUT);
    expect(storage.items.size).toBe(0);
    expect(shortcutPref.get()).toBe(DEFAULT_SHORTCUT);
  });

  it('a stored value that is not a shortcut falls back to the default', () => {
    storage.setItem('advent-agent.voice.shortcut', 'Hyper+<script>');
    expect(shortcutPref.get()).toBe(DEFAULT_SHORTCUT);
  });

  it('works without storage', () => {
    delete g.localStorage;
    shortcutPref.set('Alt+F9');
    expect(shortcutPref.get()).toBe(DEFAULT_SHORTCUT);
  });
});

describe('applyShortcut / startShortcut', () => {
  it('only a shortcut main registered is remembered', async () => {
    const { host } = fakeHost(['Ctrl+Alt+T']);
    await expect(applyShortcut(host, 'Alt+Shift+K')).resolves.toBe('Alt+Shift+K');
    expect(shortcutPref.get()).toBe('Alt+Shift+K');
    await expect(applyShortcut(host, 'Ctrl+Alt+T')).rejects.toMatchObject({
      message: expect.stringMatching(/another app/),
    });
    expect(shortcutPref.get()).toBe('Alt+Shift+K');
    await expect(applyShortcut(host, null)).resolves.toBeNull();
    expect(shortcutPref.get()).toBeNull();
  });

  it('an invalid shortcut is refused before main is asked', async () => {
    const { host } = fakeHost();
    await expect(applyShortcut(host, 'A')).rejects.toThrow(/modifier/);
    expect(host.setShortcut).not.toHaveBeenCalled();
  });

  it('at start registers the remembered shortcut and toggles on every press', async () => {
    shortcutPref.set('Alt+F9');
    const { host, press } = fakeHost();
    const toggle = vi.fn();
    const off = startShortcut(host, toggle);
    expect(host.setShortcut).toHaveBeenCalledWith('Alt+F9');
    press();
    press();
    expect(toggle).toHaveBeenCalledTimes(2);
    off();
    press();
    expect(toggle).toHaveBeenCalledTimes(2);
  });

  it('a shortcut taken since is reported, not thrown', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const { host } = fakeHost([DEFAULT_SHORTCUT]);
    startShortcut(host, () => undefined);
    await vi.waitFor(() => expect(shortcutStartProblem()).toMatch(/another app/));
    warn.mockRestore();
  });

  it('shortcutHost is window.agent only when it has both calls (Electron)', () => {
    expect(shortcutHost()).toBeUndefined();
    g.agent = { invoke: () => undefined, on: () => () => undefined };
    expect(shortcutHost()).toBeUndefined();
    const { host } = fakeHost();
    g.agent = host;
    expect(shortcutHost()).toBe(host);
  });
});

// --- the controller: toggle and the macOS microphone question ---------------------------------

function fakeEngine() {
  const opened = vi.fn();
  const engine: VoiceEngine = {
    idle: true,
    onPlaybackState: undefined,
    openCapture: async (): Promise<Capture> => {
      opened();
      return { stop: async () => undefined };
    },
    play: async () => undefined,
    flush: () => undefined,
    setOutput: async () => undefined,
  };
  return { engine, opened };
}

describe('voice controller with the global shortcut', () => {
  let clock = new FakeClock();
  /** Time moves to `ms` since the test began, firing the timers due on the way. */
  const at = (ms: number) => clock.advance(ms - clock.now());
  beforeEach(() => {
    clock = new FakeClock();
    useVoice.setState({ phase: 'idle', level: 0, problem: undefined, handsFree: false });
  });

  it('toggle: the first press starts a turn, the second sends it', async () => {
    const b = fakeBridge();
    const v = new VoiceController(fakeEngine().engine, clock);
    v.attach(b.bridge);
    await v.toggle();
    expect(useVoice.getState().phase).toBe('listening');
    at(2000);
    await v.toggle();
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd']);
    expect(useVoice.getState().phase).toBe('thinking');
  });

  it('toggle does not end a hands-free turn', async () => {
    const b = fakeBridge();
    const v = new VoiceController(fakeEngine().engine, clock);
    v.attach(b.bridge);
    await v.setHandsFree(true);
    at(2000);
    await v.toggle();
    expect(b.methods()).toEqual(['voiceStart']);
    expect(v.busy).toBe(true);
  });

  it('asks for the microphone before the first capture, and not again once granted', async () => {
    const b = fakeBridge();
    const e = fakeEngine();
    const v = new VoiceController(e.engine, clock);
    const ask = vi.fn(async () => true);
    v.askMicrophone = ask;
    v.attach(b.bridge);
    await v.press();
    expect(ask).toHaveBeenCalledTimes(1);
    expect(e.opened).toHaveBeenCalledTimes(1);
    at(1000);
    await v.release();
    await v.press();
    expect(ask).toHaveBeenCalledTimes(1);
  });

  it('refused: the "microphone denied" message, no capture, nothing sent; asked again next time', async () => {
    const b = fakeBridge();
    const e = fakeEngine();
    const v = new VoiceController(e.engine, clock);
    const ask = vi.fn(async () => false);
    v.askMicrophone = ask;
    v.attach(b.bridge);
    await v.toggle();
    expect(useVoice.getState()).toMatchObject({ problem: 'denied', phase: 'idle' });
    expect(e.opened).not.toHaveBeenCalled();
    expect(b.methods()).toEqual([]);
    expect(v.busy).toBe(false);
    await v.press();
    expect(ask).toHaveBeenCalledTimes(2);
  });

  it('a failing question leaves it to getUserMedia', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const b = fakeBridge();
    const e = fakeEngine();
    const v = new VoiceController(e.engine, clock);
    v.askMicrophone = async () => {
      throw new Error('ipc gone');
    };
    v.attach(b.bridge);
    await v.press();
    expect(e.opened).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });
});
