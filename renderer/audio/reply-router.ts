/**
 * Where each reply audio frame goes, decided off the page's main thread (in the bridge worker):
 * straight to the playback worklet, or to the page, whose voice controller decides.
 *
 * The page's rules (its ReplyPolicy) are applied here as its controller would: the reply playing
 * plays; a reply nobody announced takes over when the user is not talking and it was not
 * interrupted before (the player is flushed, the reply it replaces blocked, and the page told);
 * anything else (an interrupted reply's late audio, another reply while the user talks) goes to
 * the page. A frame plays here only when nothing is waiting on the page: what the page was
 * passed comes back as a `push` (or is dropped) before the page says it `handled` it, and the
 * page's messages arrive in order, so the player gets each reply's audio in the order it came.
 * Every push and flush reaches the worklet through this one port, so a flush drops exactly what
 * was posted before it.
 *
 * Pure (no DOM, no worker globals): unit-tested under Node with a fake port.
 */
import { decodeAudioFrame } from '../../app/contract/bridge.js';
import type { DirectNotice, PortLike, ReplyPolicy } from '../bridge/worker-messages.js';
import { Resampler, s16ToFloat } from './resample.js';

export interface RouterOptions {
  /** Reply audio played here, told to the page afterwards (its speaking state and counters). */
  played(notice: DirectNotice): void;
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
/** Interrupted replies remembered (as many as the page's controller remembers). */
const MAX_BLOCKED = 200;
/** Bench stamps kept per hop (a bench run has about 500 per page). */
const MAX_STAMPS = 4000;

export class ReplyRouter {
  private port: PortLike | undefined;
  private rate = 0;
  private approved: string | undefined;
  private listening = false;
  private readonly blocked = new Set<string>();
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

  policy(p: ReplyPolicy): void {
    this.approved = p.taskId;
    this.listening = p.listening;
    if (p.block !== undefined) this.block(p.block);
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
    const samples = pcm.byteLength >> 1;
    if (this.port && taskId === this.approved && !this.waiting.has(taskId)) {
      this.post(taskId, sampleRate, pcm);
      this.opts.played({ taskId, samples, sampleRate, at: this.opts.now() });
      return { played: true };
    }
    // A reply nobody announced (another window's turn, say) takes over, as the page would do
    // it; only with nothing waiting on the page, whose answers would come after the flush.
    if (this.port && this.waiting.size === 0 && !this.listening && !this.blocked.has(taskId)) {
      const previous = this.approved;
      if (previous !== undefined) this.block(previous);
      this.flush();
      this.approved = taskId;
      this.post(taskId, sampleRate, pcm);
      this.opts.played({
        taskId,
        samples,
        sampleRate,
        at: this.opts.now(),
        superseded: { previous },
      });
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

  private block(taskId: string): void {
    this.blocked.add(taskId);
    if (this.blocked.size > MAX_BLOCKED) this.blocked.delete(this.blocked.values().next().value!);
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
