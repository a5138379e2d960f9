/**
 * The reply player's adaptive jitter buffer: a queue of float chunks already at the output rate,
 * played as soon as the first one arrives (after a start delay that stays small until the link
 * gives a reason), gapless while data keeps coming, silence when it runs dry. Pure: no worklet
 * globals, so it is unit-tested under Node and the playback worklet is a thin shell around it.
 *
 * All times are in frames of the render clock (the worklet's `currentFrame`), the clock the audio
 * is played by: an arrival stamped with it is compared with the very clock that drains the queue.
 *
 * Playback that starts `d` after a stream's first chunk arrived runs dry exactly when a later
 * chunk arrives more than `d` behind the stream's own pace (its first arrival plus the audio
 * before it). So that lateness is the jitter measured, on every chunk, and the start delay is:
 * - at least the largest lateness of the stream playing (so after the chunk that ran the queue dry,
 *   the rest of that reply waits long enough not to run dry the same way again);
 * - at least what recent replies showed *more than once*: every run of late chunks is an episode,
 *   and the second-largest peak of the episodes still remembered is carried to the next reply. A
 *   link that jitters has many episodes, so the next reply starts with the cushion it needs; one
 *   stall (a busy machine, a hiccup) costs the reply it hit one gap, and not every reply after it
 *   a wait;
 * - at least `initialDelayMs`, small, so the first chunk plays almost at once;
 * - and on top of the largest of those, `stepMs` for each underrun still remembered: the carried
 *   lateness is only the second-largest seen, so a link that keeps jittering sometimes goes past
 *   it, and the step is the margin that stops that gap from coming back (an underrun is the queue
 *   running dry and more audio of the same stream coming within `streamGapMs`: a longer silence
 *   is the end of a reply);
 * - remembering for a while only: an episode is forgotten `memoryMs` after it happened, or once
 *   it is `memoryReplies` replies back, whichever comes first; such a window without an underrun
 *   takes a step off the underrun part, unless lateness of a step or more still recurs in it. A
 *   link that keeps jittering keeps making new episodes, so its cushion stays; an isolated stall
 *   costs its own reply and, by its underrun step, the next one or two, not the rest of the
 *   session. Within one long reply, every `steadyMs` without an underrun takes a step off that
 *   reply's own lateness;
 * - never more than `maxDelayMs`. The queue never holds more than `capacityMs` either: audio
 *   beyond it is dropped and counted, so a server cannot grow the page's memory at will.
 * The audio thread renders `burstMs` at a time (the context's `baseLatency`) ahead of the
 * output: a delay counted on the render clock shrinks by up to one burst in wall time (a burst
 * rendered at once can pass all of it). So the wait before starting is the start delay plus
 * one burst: the delay above is what lateness the start really tolerates.
 */

export interface JitterOptions {
  /** The render clock's rate (the AudioContext's sample rate). */
  rate: number;
  /** The start delay before the link has shown any jitter. */
  initialDelayMs?: number;
  /** What one underrun adds to the start delay, and what each steady period takes off. */
  stepMs?: number;
  maxDelayMs?: number;
  /** The most audio queued; more is dropped (a reply sent much faster than it plays). */
  capacityMs?: number;
  /** A silence this short between two pushes is an underrun within one stream. */
  streamGapMs?: number;
  /** This long without an underrun takes one step off the playing reply's own lateness. */
  steadyMs?: number;
  /** The most lateness episodes remembered (a bound: older ones go first). */
  memoryEpisodes?: number;
  /** How long an episode is remembered, and how long without an underrun takes a step off. */
  memoryMs?: number;
  /** The same counted in replies, the one playing included: whichever ends first counts. */
  memoryReplies?: number;
  /** How much audio the render thread renders at once (the context's baseLatency), ms. */
  burstMs?: number;
}

/** Something the buffer remembers for a while: when it happened, in which reply, how large. */
interface Memory {
  at: number;
  stream: number;
  frames: number;
}

interface Chunk {
  data: Float32Array;
  /** How many source samples this chunk stands for (the page counts what was heard in those). */
  src: number;
  offset: number;
}

export const JITTER_DEFAULTS = {
  initialDelayMs: 10,
  stepMs: 20,
  maxDelayMs: 200,
  capacityMs: 60_000,
  streamGapMs: 500,
  steadyMs: 10_000,
  memoryEpisodes: 16,
  memoryMs: 20_000,
  memoryReplies: 3,
  burstMs: 0,
} as const;

export class JitterBuffer {
  private queue: Chunk[] = [];
  /** Frames queued and not yet played. */
  buffered = 0;
  playing = false;
  /** Source samples played (for the page's "was it heard" count). */
  played = 0;
  underruns = 0;
  /** Frames dropped because the queue was full. */
  dropped = 0;
  /** The current stream's largest lateness behind its own pace, frames (see the top). */
  private current = 0;
  /** The peaks of recent runs of late chunks, oldest first, and the one being measured. */
  private readonly episodes: Memory[] = [];
  private episode = 0;
  private episodeAt = 0;
  /** The underrun part of the start delay, frames. */
  private grown = 0;
  /** The last underrun, or step off the underrun part: calm counts from there. */
  private grownSince = { at: 0, stream: 0 };
  /** Which stream (reply) is being received: counts every new one. */
  private stream = 0;
  /** The latest render frame pushed or rendered at: what memories are aged by. */
  private now = 0;

  private readonly rate: number;
  private readonly initial: number;
  private readonly step: number;
  private readonly max: number;
  private readonly capacity: number;
  private readonly streamGap: number;
  private readonly steady: number;
  private readonly memory: number;
  private readonly memoryFrames: number;
  private readonly memoryReplies: number;
  private readonly burst: number;
  /** The last underrun or step down (render frame): steady time counts from there. */
  private calmSince = 0;
  /** When the oldest queued audio arrived, while waiting to start. */
  private waitingSince: number | undefined;
  /** Where the queue last ran dry while playing, to tell an underrun from a reply's end. */
  private drainedAt: number | undefined;
  /** The pace of the stream being received: its first arrival and the audio pushed since. */
  private pace: { since: number; frames: number } | undefined;

  constructor(opts: JitterOptions) {
    const o = { ...JITTER_DEFAULTS, ...opts };
    const frames = (ms: number) => Math.round((ms * o.rate) / 1000);
    this.rate = o.rate;
    this.initial = frames(o.initialDelayMs);
    this.step = frames(o.stepMs);
    this.max = frames(o.maxDelayMs);
    this.capacity = frames(o.capacityMs);
    this.streamGap = frames(o.streamGapMs);
    this.steady = frames(o.steadyMs);
    this.memory = Math.max(2, o.memoryEpisodes);
    this.memoryFrames = frames(Math.max(0, o.memoryMs));
    this.memoryReplies = Math.max(1, o.memoryReplies);
    this.burst = frames(Math.max(0, Math.min(o.burstMs, o.maxDelayMs)));
  }

  /** The lateness part of the start delay, frames: this stream's, or what recurred lately. */
  get jitter(): number {
    return Math.max(this.current, this.recurring());
  }

  /** The start delay now, in frames: how long queued audio waits for more before it plays. */
  get delay(): number {
    return Math.min(this.max, Math.max(this.initial, this.jitter) + this.grown);
  }

  /** How long queued audio waits before it plays, ms: the start delay plus one render burst. */
  get delayMs(): number {
    return ((this.delay + this.burst) * 1000) / this.rate;
  }

  get jitterMs(): number {
    return (this.jitter * 1000) / this.rate;
  }

  /** Queue a chunk that arrived at render frame `now`. */
  push(data: Float32Array, src: number, now: number): void {
    if (data.length === 0) return;
    this.age(now);
    if (this.buffered + data.length > this.capacity) {
      this.dropped += data.length;
      return;
    }
    const pace = this.pace;
    const goesOn =
      this.drainedAt !== undefined
        ? now - this.drainedAt <= this.streamGap
        : pace !== undefined && now - pace.since - pace.frames <= this.streamGap;
    // A long silence before this chunk: a new stream, with a pace of its own.
    if (!goesOn) {
      this.pace = undefined;
      this.endEpisode();
      this.current = 0;
      this.stream += 1;
    }
    this.measure(data.length, now);
    if (this.drainedAt !== undefined) {
      // Dry, and more came soon after: the link was late, not the reply over.
      if (goesOn) this.underrun(now, data.length);
      this.drainedAt = undefined;
    }
    if (!this.playing && this.queue.length === 0) this.waitingSince = now;
    this.queue.push({ data, src, offset: 0 });
    this.buffered += data.length;
  }

  /**
   * Fill `out` for the render quantum starting at frame `now`: queued audio once it may play,
   * silence for the rest. Returns how many frames were audio.
   */
  render(out: Float32Array, now: number): number {
    this.age(now);
    if (this.current > 0 && now - this.calmSince >= this.steady) {
      this.current = Math.max(0, this.current - this.step);
      this.calmSince = now;
    }
    if (!this.playing && this.buffered > 0 && this.mayStart(now)) {
      this.playing = true;
      this.waitingSince = undefined;
    }
    let written = 0;
    if (this.playing) {
      while (written < out.length && this.queue.length > 0) {
        const chunk = this.queue[0]!;
        const n = Math.min(out.length - written, chunk.data.length - chunk.offset);
        out.set(chunk.data.subarray(chunk.offset, chunk.offset + n), written);
        chunk.offset += n;
        written += n;
        this.buffered -= n;
        this.played += (n * chunk.src) / chunk.data.length;
        if (chunk.offset >= chunk.data.length) this.queue.shift();
      }
      if (this.queue.length === 0) {
        this.playing = false;
        this.drainedAt = now + written;
      }
    }
    out.fill(0, written);
    return written;
  }

  /** Drop everything at once (barge-in). What was learnt about the link stays. */
  flush(): void {
    this.queue = [];
    this.buffered = 0;
    this.playing = false;
    this.waitingSince = undefined;
    this.drainedAt = undefined;
    this.pace = undefined;
  }

  /**
   * Waited long enough, or already holding that much beyond the newest chunk (a server sending
   * faster than real time has built the cushion by itself).
   */
  private mayStart(now: number): boolean {
    const delay = this.delay + this.burst;
    if (now - (this.waitingSince ?? now) >= delay) return true;
    const newest = this.queue.at(-1);
    return newest !== undefined && this.buffered - newest.data.length >= delay;
  }

  private underrun(now: number, frames: number): void {
    this.underruns += 1;
    this.calmSince = now;
    this.grown = Math.min(this.max, this.grown + this.step);
    this.grownSince = { at: now, stream: this.stream };
    // Playback starts over from this chunk: lateness counts from here.
    this.pace = { since: now, frames };
  }

  /** How far behind its stream's pace this chunk came; the first of a stream sets the pace. */
  private measure(frames: number, now: number): void {
    const pace = this.pace;
    if (!pace) {
      this.pace = { since: now, frames };
      return;
    }
    const late = Math.min(this.max, now - pace.since - pace.frames);
    pace.frames += frames;
    if (late > this.current) this.current = late;
    // Within its start delay a chunk is on time: it ends the run of late ones, if any.
    if (late > this.initial) {
      this.episode = Math.max(this.episode, late);
      this.episodeAt = now;
    } else this.endEpisode();
  }

  private endEpisode(): void {
    if (this.episode === 0) return;
    this.episodes.push({ at: this.episodeAt, stream: this.stream, frames: this.episode });
    if (this.episodes.length > this.memory) this.episodes.shift();
    this.episode = 0;
  }

  /** Not yet forgotten: recent enough, and among the last `memoryReplies` replies. */
  private remembers(m: { at: number; stream: number }): boolean {
    return this.now - m.at < this.memoryFrames && this.stream - m.stream < this.memoryReplies;
  }

  /**
   * Time passes: a whole memory window without an underrun takes a step off the underrun part,
   * unless lateness of a step or more still recurs in it: the margin stays while the link keeps
   * jittering, and an isolated stall's step goes with its window.
   */
  private age(now: number): void {
    this.now = now;
    if (this.grown > 0 && !this.remembers(this.grownSince) && this.recurring() < this.step) {
      this.grown = Math.max(0, this.grown - this.step);
      this.grownSince = { at: now, stream: this.stream };
    }
  }

  /** The second-largest recent episode: lateness seen at least twice lately. */
  private recurring(): number {
    let first = 0;
    let second = 0;
    // No array is made here: this runs on the audio thread while a reply waits to start.
    for (let i = 0; i <= this.episodes.length; i++) {
      const m = i < this.episodes.length ? this.episodes[i]! : undefined;
      const e = m ? (this.remembers(m) ? m.frames : 0) : this.episode;
      if (e > first) {
        second = first;
        first = e;
      } else if (e > second) second = e;
    }
    return second;
  }
}
