/**
 * Where each reply audio frame goes, decided off the page's main thread (in the bridge worker):
 * straight to the playback worklet, or to the page, whose voice controller decides (a reply
 * nobody announced, a barge-in's late audio, a reply arriving while the user talks).
 *
 * A frame plays here only when it belongs to the reply the page has approved and nothing of that
 * reply is still waiting on the page: what the page passed on comes back as a `push` (or is
 * dropped) before the page says it `handled` it, and messages from the page arrive in order, so
 * the player gets each reply's audio in the order it came. Every push and flush reaches the
 * worklet through this one port, so a flush drops exactly what was posted before it.
 *
 * Pure (no DOM, no worker globals): unit-tested under Node with a fake port.
 */
import { decodeAudioFrame } from '../../app/contract/bridge.js';
import type { PortLike } from '../bridge/worker-messages.js';
import { Resampler, s16ToFloat } from './resample.js';

export interface RouterOptions {
  /** Reply audio played here, told to the page afterwards (its speaking state and counters). */
  played(notice: { taskId: string; samples: number; sampleRate: number; at: number }): void;
  /** Wall-clock ms, for the bench's stamps. */
  now(): number;
  /** The most audio held for a player not attached yet, ms (at the reply's own rate). */
  maxHeldMs?: number;
}

/** One stamp of the bench's reply hops (test/bench/reply-hops.ts). */
export interface HopStamp {
  task: string;
  at: number;
}

/** Tasks whose frames wait on the page, kept at most: an older one's count is forgotten. */
const MAX_WAITING_TASKS = 64;
/** Bench stamps kept per hop (a bench run has about 500 per page). */
const MAX_STAMPS = 4000;

export class ReplyRouter {
  private port: PortLike | undefined;
  private rate = 0;
  private approved: string | undefined;
  /** Frames passed to the page and not yet handled there, per task. */
  private readonly waiting = new Map<string, number>();
  private resampler: { taskId: string; rate: number; r: Resampler } | undefined;
  /** Pushes that came before the player was attached, played once it is. */
  private held: Array<{ taskId: string; sampleRate: number; pcm: ArrayBuffer }> = [];
  private heldMs = 0;
  private readonly maxHeldMs: number;
  /** When each reply frame reached this thread, and when it was posted to the player. */
  readonly hops: { page: HopStamp[]; player: HopStamp[] } = { page: [], player: [] };

  constructor(private readonly opts: RouterOptions) {
    this.maxHeldMs = opts.maxHeldMs ?? 10_000;
  }

  /** The playback worklet's port, at the output context's rate. */
  attachPlayer(port: PortLike, rate: number): void {
    this.port = port;
    if (rate !== this.rate) this.resampler = undefined;
    this.rate = rate;
    const held = this.held;
    this.held = [];
    this.heldMs = 0;
    for (const h of held) this.post(h.taskId, h.sampleRate, h.pcm);
  }

  approve(taskId: string | undefined): void {
    this.approved = taskId;
  }

  /**
   * A binary frame from the bridge socket: `played` when it went to the player here, else the
   * task to tell the page it must answer for (undefined: not reply audio the router can read).
   */
  fromSocket(frame: ArrayBuffer): { played: true } | { played: false; taskId?: string } {
    const audio = decodeAudioFrame(frame);
    if (!audio) return { played: false };
    const { taskId, sampleRate, pcm } = audio;
    this.stamp(this.hops.page, taskId);
    if (this.port && taskId === this.approved && !this.waiting.has(taskId)) {
      this.post(taskId, sampleRate, pcm);
      this.opts.played({ taskId, samples: pcm.byteLength >> 1, sampleRate, at: this.opts.now() });
      return { played: true };
    }
    this.waiting.set(taskId, (this.waiting.get(taskId) ?? 0) + 1);
    if (this.waiting.size > MAX_WAITING_TASKS)
      this.waiting.delete(this.waiting.keys().next().value!);
    return { played: false, taskId };
  }

  /** The page has handled one frame of `taskId` that was passed to it. */
  handled(taskId: string): void {
    const n = this.waiting.get(taskId);
    if (n === undefined) return;
    if (n <= 1) this.waiting.delete(taskId);
    else this.waiting.set(taskId, n - 1);
  }

  /** Reply audio the page decided to play. */
  push(taskId: string, sampleRate: number, pcm: ArrayBuffer): void {
    if (this.port) {
      this.post(taskId, sampleRate, pcm);
      return;
    }
    const ms = (pcm.byteLength >> 1) / (sampleRate / 1000);
    // Bounded: a context that never starts keeps the latest audio, not all of it.
    while (this.heldMs + ms > this.maxHeldMs && this.held.length > 0) {
      const old = this.held.shift()!;
      this.heldMs -= (old.pcm.byteLength >> 1) / (old.sampleRate / 1000);
    }
    this.held.push({ taskId, sampleRate, pcm });
    this.heldMs += ms;
  }

  /** Barge-in: everything posted so far is dropped by the player, nothing held survives. */
  flush(): void {
    this.held = [];
    this.heldMs = 0;
    this.resampler = undefined;
    this.port?.postMessage({ type: 'flush' }, []);
  }

  private post(taskId: string, sampleRate: number, pcm: ArrayBuffer): void {
    const port = this.port;
    if (!port) return;
    const samples = s16ToFloat(pcm);
    if (samples.length === 0) return;
    let data = samples;
    if (sampleRate !== this.rate) {
      const r = this.resampler;
      if (!r || r.taskId !== taskId || r.rate !== sampleRate)
        this.resampler = { taskId, rate: sampleRate, r: new Resampler(sampleRate, this.rate) };
      data = this.resampler!.r.process(samples);
    }
    this.stamp(this.hops.player, taskId);
    port.postMessage({ type: 'push', data, src: samples.length }, [data.buffer as ArrayBuffer]);
  }

  private stamp(list: HopStamp[], task: string): void {
    if (list.length >= MAX_STAMPS) list.shift();
    list.push({ task: task.trim(), at: this.opts.now() });
  }
}
