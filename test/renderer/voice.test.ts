import { beforeEach, describe, expect, it } from 'vitest';
import { Resampler, floatToS16, lowPass, rms, s16ToFloat } from '../../renderer/audio/resample.js';
import { type Capture, MicError, type VoiceEngine } from '../../renderer/audio/shared.js';
import { VoiceController } from '../../renderer/features/voice/controller.js';
import { useVoice } from '../../renderer/store/voice.js';
import { fakeBridge } from './fake-bridge.js';
import { MAX_HELD_AUDIO_BYTES } from '../../app/contract/voice.js';
import { FakeClock } from '../helpers/fake-clock.js';

function sine(hz: number, rate: number, seconds: number, amp = 0.5): Float32Array {
  const n = Math.round(rate * seconds);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = amp * Math.sin((2 * Math.PI * hz * i) / rate);
  return out;
}

/** Feed `input` in chunks of `size` and join the outputs. */
function chunked(r: Resampler, input: Float32Array, size: number): Float32Array {
  const parts: Float32Array[] = [];
  for (let at = 0; at < input.length; at += size)
    parts.push(r.process(input.subarray(at, at + size)));
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Amplitude of `hz` in `x` (single-bin DFT). */
function tone(x: Float32Array, hz: number, rate: number): number {
  let re = 0;
  let im = 0;
  for (let i = 0; i < x.length; i++) {
    re += (x[i] ?? 0) * Math.cos((2 * Math.PI * hz * i) / rate);
    im += (x[i] ?? 0) * Math.sin((2 * Math.PI * hz * i) / rate);
  }
  return (2 * Math.hypot(re, im)) / x.length;
}

describe('resampler', () => {
  it('48 kHz → 16 kHz keeps a 1 kHz tone, in any chunk size, with the right length', () => {
    const input = sine(1000, 48_000, 1);
    for (const size of [128, 441, 1000]) {
      const out = chunked(new Resampler(48_000, 16_000), input, size);
      expect(Math.abs(out.length - 16_000)).toBeLessThanOrEqual(2);
      // Skip the filter's start-up.
      expect(tone(out.subarray(100), 1000, 16_000)).toBeCloseTo(0.5, 1);
    }
  });

  it('filters what would alias: a 12 kHz tone at 48 kHz is gone at 16 kHz (not folded to 4 kHz)', () => {
    const out = new Resampler(48_000, 16_000).process(sine(12_000, 48_000, 0.5));
    expect(tone(out.subarray(100), 4000, 16_000)).toBeLessThan(0.01);
    expect(rms(out.subarray(100))).toBeLessThan(0.01);
  });

  it('44.1 kHz → 16 kHz and 16 kHz → 48 kHz keep the tone', () => {
    const down = new Resampler(44_100, 16_000).process(sine(440, 44_100, 1));
    expect(tone(down.subarray(100), 440, 16_000)).toBeCloseTo(0.5, 1);
    const up = chunked(new Resampler(16_000, 48_000), sine(440, 16_000, 1), 320);
    expect(Math.abs(up.length - 48_000)).toBeLessThanOrEqual(3);
    expect(tone(up, 440, 48_000)).toBeCloseTo(0.5, 1);
  });

  it('the low-pass has unity gain at DC; s16 conversion round-trips and clamps', () => {
    expect(lowPass(63, 0.15).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
    const s16 = floatToS16(Float32Array.from([0, 0.5, -0.5, 2, -2]));
    expect(Array.from(s16)).toEqual([0, 16384, -16384, 32767, -32768]);
    const back = s16ToFloat(s16.buffer as ArrayBuffer);
    expect(back[1]).toBeCloseTo(0.5, 3);
  });
});

// --- the controller, with a fake bridge and a fake engine -------------------------------------

function fakeEngine(opts: { deny?: boolean } = {}) {
  const played: string[] = [];
  let flushes = 0;
  let chunkSink: ((pcm: ArrayBuffer) => void) | undefined;
  const engine: VoiceEngine = {
    idle: true,
    onPlaybackState: undefined,
    openCapture: async (onChunk): Promise<Capture> => {
      if (opts.deny) throw new MicError('denied', 'Permission denied');
      chunkSink = onChunk;
      return {
        stop: async () => {
          chunkSink = undefined;
        },
      };
    },
    play: async (taskId) => {
      played.push(taskId);
    },
    flush: () => {
      flushes++;
    },
    setOutput: async () => {},
  };
  return {
    engine,
    played,
    flushes: () => flushes,
    /** A 20 ms chunk from the microphone, its first byte `mark` (to tell chunks apart). */
    chunk: (mark = 0) => {
      const pcm = new ArrayBuffer(640);
      new Uint8Array(pcm)[0] = mark;
      chunkSink?.(pcm);
    },
  };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('voice controller', () => {
  let clock = new FakeClock();
  /** Time moves to `ms` since the test began, firing the timers due on the way. */
  const at = (ms: number) => clock.advance(ms - clock.now());
  beforeEach(() => {
    clock = new FakeClock();
    useVoice.setState({ phase: 'idle', level: 0, problem: undefined, handsFree: false });
  });

  it('push-to-talk: voiceStart, chunks as binary frames (those before the task id too), voiceEnd', async () => {
    const b = fakeBridge();
    const e = fakeEngine();
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    const pressing = v.press();
    await tick();
    e.chunk(); // captured before voiceStart answered: held back, then sent
    await pressing;
    expect(useVoice.getState().phase).toBe('listening');
    e.chunk();
    at(1200);
    await v.release();
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd']);
    expect(b.sent.length).toBe(2);
    expect(useVoice.getState().phase).toBe('thinking');
  });

  it('a press shorter than 300 ms sends nothing: no voiceStart, none of its audio', async () => {
    const b = fakeBridge();
    const e = fakeEngine();
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    await v.press();
    e.chunk();
    at(150);
    e.chunk();
    await v.release();
    e.chunk(); // what the capture delivers while it stops
    at(1000);
    await tick();
    expect(b.calls).toEqual([]);
    expect(b.sent).toEqual([]);
    expect(useVoice.getState().phase).toBe('idle');
    expect(v.busy).toBe(false);
  });

  it('a press held past 300 ms starts its turn then, with everything it captured so far, in order', async () => {
    const b = fakeBridge();
    const e = fakeEngine();
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    await v.press();
    e.chunk(1);
    at(100);
    e.chunk(2);
    at(299);
    await tick();
    expect(b.calls).toEqual([]);
    at(300);
    e.chunk(3); // while voiceStart is on its way: held too
    await tick();
    expect(b.methods()).toEqual(['voiceStart']);
    e.chunk(4);
    at(800);
    await v.release();
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd']);
    expect(b.sent.map((pcm) => new Uint8Array(pcm)[0])).toEqual([1, 2, 3, 4]);
  });

  it('what a press holds while its turn cannot start is bounded: the newest audio is kept', async () => {
    const b = fakeBridge();
    const e = fakeEngine();
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    const open = b.holdStart();
    await v.press();
    at(300);
    const chunks = MAX_HELD_AUDIO_BYTES / 640 + 50;
    for (let i = 0; i < chunks; i++) e.chunk(i % 250);
    open();
    await tick();
    expect(b.sent.length).toBe(MAX_HELD_AUDIO_BYTES / 640);
    expect(new Uint8Array(b.sent[0]!)[0]).toBe(50);
    expect(new Uint8Array(b.sent.at(-1)!)[0]).toBe((chunks - 1) % 250);
    at(20_000);
    await v.release();
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd']);
  });

  it('microphone denied: the problem is shown and nothing is sent', async () => {
    const b = fakeBridge();
    const e = fakeEngine({ deny: true });
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    await v.press();
    at(1000);
    await v.release();
    expect(b.calls).toEqual([]);
    expect(b.sent).toEqual([]);
    expect(useVoice.getState().problem).toBe('denied');
    expect(useVoice.getState().phase).toBe('idle');
  });

  it('barge-in: talking over a reply flushes it, and that task’s late audio is never played', async () => {
    const b = fakeBridge();
    const e = fakeEngine();
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    const audio = (taskId: string) =>
      b.emit('audio', {
        connection: 'c',
        taskId,
        seq: 0,
        sampleRate: 16_000,
        pcm: new ArrayBuffer(640),
      });

    await v.press();
    at(1000);
    await v.release(); // task1
    audio('task1');
    expect(e.played).toEqual(['task1']);
    expect(useVoice.getState().phase).toBe('speaking');

    const flushesBefore = e.flushes();
    await v.press(); // talking again while task1 plays
    expect(e.flushes()).toBe(flushesBefore + 1);
    audio('task1'); // late frames of the interrupted reply
    at(2500);
    await v.release(); // task2
    audio('task1');
    audio('task2');
    expect(e.played).toEqual(['task1', 'task2']);

    // A reply nobody announced (a typed message's) takes over when nothing else is going on.
    audio('task9');
    expect(e.played.at(-1)).toBe('task9');
    audio('task2');
    expect(e.played.at(-1)).toBe('task9');
  });

  it('hands-free: streams until the server’s LISTEN stop, then ends the turn', async () => {
    const b = fakeBridge();
    const e = fakeEngine();
    const v = new VoiceController(e.engine, clock);
    v.attach(b.bridge);
    await v.setHandsFree(true);
    e.chunk();
    await v.release(); // push-to-talk release does not end a hands-free turn
    expect(b.methods()).toEqual(['voiceStart']);
    b.emit('listen', { connection: 'c', taskId: 'task1', message: { state: 'detecting' } });
    b.emit('listen', { connection: 'c', taskId: 'task1', message: { state: 'stop', mode: 'vad' } });
    await tick();
    await tick();
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd']);
    expect(b.sent.length).toBe(1);
    // The reply finishes (no audio): the next turn starts.
    b.emit('chat', {
      kind: 'assistant',
      id: 'a1',
      connection: 'c',
      taskId: 'task1',
      text: 'ok',
      state: 'done',
      at: 0,
    } as never);
    await tick();
    await tick();
    expect(b.methods()).toEqual(['voiceStart', 'voiceEnd', 'voiceStart']);
    await v.setHandsFree(false);
  });
});
