import { describe, expect, it } from 'vitest';
import { JITTER_DEFAULTS, JitterBuffer } from '../../renderer/audio/jitter-buffer.js';

const RATE = 48_000;
const QUANTUM = 128;
const frames = (ms: number) => Math.round((ms * RATE) / 1000);
const CHUNK = frames(20);

/** A 20 ms chunk of a constant non-zero level (so silence in the output is a gap, never data). */
function chunk(level = 0.5, n = CHUNK): Float32Array {
  return new Float32Array(n).fill(level);
}

/**
 * Play `arrivals` (render frame of each 20 ms chunk) through `b`, quantum by quantum, as the
 * audio thread does: messages that arrived by a quantum's start are queued before it renders.
 * Returns the output.
 */
function play(b: JitterBuffer, arrivals: number[], until: number): Float32Array {
  const out = new Float32Array(until);
  const pending = [...arrivals].sort((x, y) => x - y);
  for (let now = 0; now + QUANTUM <= until; now += QUANTUM) {
    while (pending.length > 0 && pending[0]! <= now) {
      pending.shift();
      b.push(chunk(), CHUNK / 3, now);
    }
    b.render(out.subarray(now, now + QUANTUM), now);
  }
  return out;
}

function firstSound(out: Float32Array): number {
  return out.findIndex((x) => x !== 0);
}

/** Silent runs between the first and the last sound: the gaps a listener hears. */
function gaps(out: Float32Array): number {
  const first = firstSound(out);
  let last = out.length - 1;
  while (last > 0 && out[last] === 0) last--;
  let n = 0;
  for (let i = first + 1; i <= last; i++) if (out[i] === 0 && out[i - 1] !== 0) n++;
  return n;
}

/** Deterministic lateness in [0, maxMs) per chunk (a tiny LCG: same every run). */
function lateness(count: number, maxMs: number, seed = 7): number[] {
  let s = seed;
  return Array.from({ length: count }, () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return frames((s / 2 ** 31) * maxMs);
  });
}

describe('jitter buffer', () => {
  it('plays the first chunk as soon as it arrives when set to start at once', () => {
    const b = new JitterBuffer({ rate: RATE, initialDelayMs: 0 });
    const out = play(b, [frames(100)], frames(200));
    // The first quantum that starts after the arrival carries it.
    expect(firstSound(out)).toBe(Math.ceil(frames(100) / QUANTUM) * QUANTUM);
  });

  it('by default waits only its small start delay, not for a second chunk', () => {
    const b = new JitterBuffer({ rate: RATE });
    const at = frames(100);
    const out = play(b, [at], frames(300));
    const waited = firstSound(out) - at;
    expect(waited).toBeGreaterThanOrEqual(frames(JITTER_DEFAULTS.initialDelayMs));
    expect(waited).toBeLessThan(frames(JITTER_DEFAULTS.initialDelayMs) + 2 * QUANTUM);
    expect(waited).toBeLessThan(CHUNK);
  });

  it('a stream that arrives on time plays without a gap, and the delay stays where it started', () => {
    const b = new JitterBuffer({ rate: RATE });
    const arrivals = Array.from({ length: 100 }, (_, i) => frames(50) + i * CHUNK);
    const out = play(b, arrivals, frames(2200));
    expect(gaps(out)).toBe(0);
    expect(b.underruns).toBe(0);
    expect(b.delayMs).toBe(JITTER_DEFAULTS.initialDelayMs);
    // Every sample arrived is played, and counted in source samples.
    expect(out.filter((x) => x !== 0).length).toBe(100 * CHUNK);
    expect(b.played).toBeCloseTo((100 * CHUNK) / 3, 6);
  });

  it('a jittery link: a few underruns grow the delay until the rest plays without a gap', () => {
    const b = new JitterBuffer({ rate: RATE });
    const late = lateness(400, 45);
    const arrivals = late.map((l, i) => frames(50) + i * CHUNK + l);
    const out = play(b, arrivals, frames(50) + 400 * CHUNK + frames(300));
    expect(b.underruns).toBeGreaterThan(0);
    expect(b.underruns).toBeLessThan(8);
    expect(b.delayMs).toBeGreaterThan(JITTER_DEFAULTS.initialDelayMs);
    expect(b.delayMs).toBeLessThanOrEqual(JITTER_DEFAULTS.maxDelayMs);
    // After it has learnt the link, the second half has no gap at all.
    const half = out.subarray(frames(50) + 200 * CHUNK + frames(100), frames(50) + 400 * CHUNK);
    expect(half.every((x) => x !== 0)).toBe(true);
    expect(b.jitter).toBeGreaterThan(0);
  });

  it('what it learnt carries to the next reply: that one starts later and plays through', () => {
    const b = new JitterBuffer({ rate: RATE });
    const late = lateness(100, 45, 3);
    const first = late.map((l, i) => i * CHUNK + l);
    const secondStart = frames(4000);
    const second = late.map((l, i) => secondStart + i * CHUNK + l);
    const out = play(b, [...first, ...second], secondStart + 100 * CHUNK + frames(300));
    const underrunsFirst = b.underruns;
    expect(underrunsFirst).toBeGreaterThan(0);
    expect(gaps(out.subarray(secondStart))).toBe(0);
  });

  it('the end of a reply is not an underrun: a reply seconds later starts with the same delay', () => {
    const b = new JitterBuffer({ rate: RATE });
    const reply = (from: number) => Array.from({ length: 30 }, (_, i) => from + i * CHUNK);
    play(b, [...reply(0), ...reply(frames(3000))], frames(4000));
    expect(b.underruns).toBe(0);
    expect(b.delayMs).toBe(JITTER_DEFAULTS.initialDelayMs);
  });

  it('a stall raises the delay to cover it; long steady playback brings it back down, slowly', () => {
    // One stall of 100 ms early on, then a steady stream for six seconds.
    const arrivals = Array.from({ length: 300 }, (_, i) => i * CHUNK + (i >= 10 ? frames(100) : 0));
    const early = new JitterBuffer({ rate: RATE, steadyMs: 1000 });
    play(early, arrivals.slice(0, 30), 30 * CHUNK + frames(200));
    expect(early.underruns).toBe(1);
    // The lateness that ran it dry: 100 ms behind the stream's pace, give or take a quantum.
    expect(early.delayMs).toBeGreaterThanOrEqual(95);
    expect(early.jitterMs).toBeGreaterThanOrEqual(95);

    const b = new JitterBuffer({ rate: RATE, steadyMs: 1000, memoryMs: 2000 });
    const out = play(b, arrivals, 300 * CHUNK + frames(400));
    expect(b.underruns).toBe(1);
    expect(gaps(out)).toBe(1);
    // Five steady seconds later (the underrun forgotten after two, the lateness a step off each
    // second): back to where it started.
    expect(b.delayMs).toBe(JITTER_DEFAULTS.initialDelayMs);
  });

  it('one stall costs the reply it hit one gap, not a long wait before every reply after it', () => {
    const b = new JitterBuffer({ rate: RATE });
    const reply = (from: number, stallAt = -1, stallMs = 0) =>
      Array.from(
        { length: 30 },
        (_, i) => from + i * CHUNK + (stallAt >= 0 && i >= stallAt ? frames(stallMs) : 0),
      );
    const second = frames(3000);
    const out = play(b, [...reply(0, 10, 120), ...reply(second)], second + frames(1000));
    expect(gaps(out.subarray(0, second))).toBe(1);
    // The next reply starts after the small delay (and the one underrun's step), not 120 ms.
    const waited = firstSound(out.subarray(second));
    expect(waited).toBeLessThan(
      frames(JITTER_DEFAULTS.initialDelayMs + JITTER_DEFAULTS.stepMs) + 2 * QUANTUM,
    );
    expect(gaps(out.subarray(second))).toBe(0);
  });

  it('stalls that recur are carried: after two, the next reply starts with a cushion for them', () => {
    const b = new JitterBuffer({ rate: RATE });
    const reply = (from: number, stallAt: number, stallMs: number) =>
      Array.from({ length: 30 }, (_, i) => from + i * CHUNK + (i >= stallAt ? frames(stallMs) : 0));
    const at = [0, frames(3000), frames(6000)];
    const arrivals = [...reply(at[0]!, 10, 80), ...reply(at[1]!, 5, 60), ...reply(at[2]!, 12, 50)];
    const out = play(b, arrivals, at[2]! + frames(1000));
    expect(gaps(out.subarray(0, at[1]!))).toBe(1);
    expect(gaps(out.subarray(at[1]!, at[2]!))).toBe(1);
    // Stalls of 80 and 60 ms seen: the third reply waits at least 60 ms and rides out its 50.
    expect(firstSound(out.subarray(at[2]!))).toBeGreaterThanOrEqual(frames(60));
    expect(gaps(out.subarray(at[2]!))).toBe(0);
  });

  /** A 30-chunk reply from `from`, every chunk from `stallAt` on `stallMs` late. */
  const stalled = (from: number, stallAt = -1, stallMs = 0) =>
    Array.from(
      { length: 30 },
      (_, i) => from + i * CHUNK + (stallAt >= 0 && i >= stallAt ? frames(stallMs) : 0),
    );

  /** How long each reply starting at `starts` waited before it was heard, and its gaps. */
  function replies(out: Float32Array, starts: number[]): Array<{ waited: number; gaps: number }> {
    return starts.map((s, i) => {
      const part = out.subarray(s, starts[i + 1] ?? out.length);
      return { waited: firstSound(part), gaps: gaps(part) };
    });
  }

  it('isolated stalls are forgotten after a few replies: later replies start with the small delay again', () => {
    // Replies 3 s apart; a 100 ms stall in the first and a 90 ms one in the sixth (15 s apart,
    // both within the time window): a busy machine now and then, not a jittery link.
    const starts = Array.from({ length: 10 }, (_, r) => frames(3000) * r);
    const arrivals = starts.flatMap((s, r) =>
      r === 0 ? stalled(s, 10, 100) : r === 5 ? stalled(s, 8, 90) : stalled(s),
    );
    const b = new JitterBuffer({ rate: RATE });
    const heard = replies(play(b, arrivals, starts.at(-1)! + frames(1000)), starts);
    expect(heard[0]!.gaps).toBe(1);
    expect(heard[5]!.gaps).toBe(1);
    const small = frames(JITTER_DEFAULTS.initialDelayMs) + 2 * QUANTUM;
    const oneStep = frames(JITTER_DEFAULTS.stepMs);
    // The reply after each stall pays at most its underrun's step, never the stall's lateness.
    expect(heard[6]!.waited).toBeLessThan(small + oneStep);
    // Three replies on, both stalls are forgotten.
    for (const r of [3, 4, 8, 9]) {
      expect(heard[r]!.waited).toBeLessThan(small);
      expect(heard[r]!.gaps).toBe(0);
    }
    expect(b.delayMs).toBe(JITTER_DEFAULTS.initialDelayMs);
  });

  it('stalls far apart in time are not carried, even in consecutive replies', () => {
    // Two stalls 25 s apart (past the 20 s window), then a reply two seconds later.
    const starts = [0, frames(25_000), frames(27_000)];
    const arrivals = [...stalled(starts[0]!, 10, 100), ...stalled(starts[1]!, 10, 80)];
    arrivals.push(...stalled(starts[2]!));
    const b = new JitterBuffer({ rate: RATE });
    const heard = replies(play(b, arrivals, starts[2]! + frames(1000)), starts);
    // Only the second stall's underrun step is left: no cushion of 80 ms for a one-off.
    const small = frames(JITTER_DEFAULTS.initialDelayMs) + 2 * QUANTUM;
    expect(heard[2]!.waited).toBeLessThan(small + frames(JITTER_DEFAULTS.stepMs));
    expect(heard[2]!.gaps).toBe(0);
    // Twenty quiet seconds later, that is gone too.
    const later = new JitterBuffer({ rate: RATE });
    const quiet = frames(21_000);
    const out = play(later, [...stalled(0, 10, 100), ...stalled(quiet)], quiet + frames(1000));
    expect(firstSound(out.subarray(quiet))).toBeLessThan(small);
  });

  it('a link that keeps jittering keeps its cushion, long past the memory window: reply after reply plays through', () => {
    // Twelve replies 8 s apart (96 s in all, the window is 20 s); in each, bursts of 40 ms late
    // every seventh chunk, and a few ms of noise on every chunk.
    const starts = Array.from({ length: 12 }, (_, r) => frames(8000) * r);
    // The link is a stream: a chunk never overtakes the one before.
    const arrivals = starts.flatMap((s, r) => {
      let last = 0;
      return lateness(30, 4, 11 + r).map((l, i) => {
        last = Math.max(last, s + i * CHUNK + l + (i % 7 === 3 ? frames(40) : 0));
        return last;
      });
    });
    const b = new JitterBuffer({ rate: RATE });
    const heard = replies(play(b, arrivals, starts.at(-1)! + frames(1000)), starts);
    expect(heard[0]!.gaps).toBeGreaterThan(0);
    // Once it has learnt the link, the cushion stays: no later reply has a gap.
    for (const r of heard.slice(2)) {
      expect(r.gaps).toBe(0);
      expect(r.waited).toBeGreaterThanOrEqual(frames(35));
    }
    expect(b.delayMs).toBeGreaterThanOrEqual(35);
    expect(b.delayMs).toBeLessThanOrEqual(JITTER_DEFAULTS.maxDelayMs);
  });

  it('never waits more than its bound, however bad the link', () => {
    const b = new JitterBuffer({ rate: RATE, maxDelayMs: 120 });
    // Every chunk 300 ms after the one before: an underrun each time.
    const arrivals = Array.from({ length: 20 }, (_, i) => i * frames(300));
    play(b, arrivals, frames(6500));
    expect(b.underruns).toBe(19);
    expect(b.delayMs).toBeLessThanOrEqual(120);
  });

  it('a server sending faster than real time starts at once, as the cushion is already there', () => {
    const b = new JitterBuffer({ rate: RATE, initialDelayMs: 40 });
    for (let i = 0; i < 10; i++) b.push(chunk(), CHUNK, 0);
    const out = new Float32Array(QUANTUM);
    expect(b.render(out, 0)).toBe(QUANTUM);
  });

  it('holds a bounded amount: audio past its capacity is dropped and counted', () => {
    const b = new JitterBuffer({ rate: RATE, capacityMs: 1000 });
    for (let i = 0; i < 80; i++) b.push(chunk(), CHUNK, 0);
    expect(b.buffered).toBe(50 * CHUNK);
    expect(b.dropped).toBe(30 * CHUNK);
  });

  it('flush silences it at once, and the next reply plays normally', () => {
    const b = new JitterBuffer({ rate: RATE, initialDelayMs: 0 });
    for (let i = 0; i < 5; i++) b.push(chunk(), CHUNK, 0);
    const out = new Float32Array(QUANTUM);
    b.render(out, 0);
    b.flush();
    expect(b.buffered).toBe(0);
    expect(b.render(out, QUANTUM)).toBe(0);
    expect(out.every((x) => x === 0)).toBe(true);
    b.push(chunk(0.25), CHUNK, 2 * QUANTUM);
    expect(b.render(out, 2 * QUANTUM)).toBe(QUANTUM);
    expect(out[0]).toBe(0.25);
    expect(b.underruns).toBe(0);
  });
  it('a render burst cannot pass the start delay: the wait adds one burst, so on-time audio after the audio thread caught up plays without a gap', () => {
    const burstMs = 10;
    const at = frames(100);
    // The audio thread was late and renders two bursts back to back when the first chunk comes:
    // from then on its clock runs one burst ahead, so every later chunk arrives a burst "later"
    // on it, plus up to 8 ms of lateness of its own.
    const late = lateness(30, 8);
    const arrivals = [
      at,
      ...late.slice(1).map((l, i) => at + (i + 1) * CHUNK + frames(burstMs) + l),
    ];
    const withBurst = new JitterBuffer({ rate: RATE, burstMs });
    const out = play(withBurst, arrivals, frames(900));
    expect(gaps(out)).toBe(0);
    expect(firstSound(out) - at).toBeGreaterThanOrEqual(
      frames(JITTER_DEFAULTS.initialDelayMs + burstMs),
    );
    expect(withBurst.underruns).toBe(0);
    // Counting the start delay on the render clock alone, the burst eats it: a gap.
    expect(gaps(play(new JitterBuffer({ rate: RATE }), arrivals, frames(900)))).toBeGreaterThan(0);
  });
});
