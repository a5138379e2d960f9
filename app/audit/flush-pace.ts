/**
 * Whether the audit log's next flush (fdatasync) is made inline, on the event loop, or handed to
 * the thread pool.
 *
 * Handing a flush to the thread pool costs two wake-ups between threads on every call: the pool's
 * thread to run it, then the event loop to hear it is done. On a fast disk that hand-off costs
 * about half as much again as the flush itself (the bench machine: about 0.1 ms per call, against
 * an fdatasync of 0.2 ms). Made inline, a flush blocks the event loop for as long as the disk
 * takes, so it is made inline only while the disk proves quick: while at least `quickShare` of the
 * last `window` flushes (all timed, inline or not) took under `quickMs`, and never within `coolMs`
 * of an inline flush that took `stallMs` or more. A disk that is never quick never stalls the event
 * loop; one that turns slow (a busy laptop drive, a synced folder) stalls it at most once per
 * `coolMs`, for one flush, before the thread pool takes over again. The share, not an average, so
 * that a quick disk's rare slow flush does not send every flush back to the thread pool.
 *
 * Only a stall made inline starts the cool-off: one in the thread pool stalled nothing but its own
 * call, and the guarantee (one stall of the event loop per `coolMs` at most) holds without it. On
 * a disk whose journal commits make a flush wait every second or so, counting those too kept every
 * flush in the pool (the bench: 10222 of 10222 after 15 such flushes in 13 s).
 */
export interface FlushPaceLimits {
  /** A flush quicker than this (ms) counts as quick. */
  quickMs: number;
  /** How many of the latest flushes are remembered; none is inline before this many are timed. */
  window: number;
  /** The share of them that must have been quick. */
  quickShare: number;
  /** An inline flush this long (ms) is a stall a person might notice: none is inline for `coolMs` after. */
  stallMs: number;
  coolMs: number;
}

export const FLUSH_PACE: FlushPaceLimits = {
  quickMs: 1,
  window: 32,
  quickShare: 0.75,
  stallMs: 10,
  coolMs: 5_000,
};

export class FlushPace {
  /** Whether each of the latest flushes was quick, oldest overwritten first. */
  private readonly quick: boolean[] = [];
  private next = 0;
  private quickCount = 0;
  private stallAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly limits: FlushPaceLimits = FLUSH_PACE,
  ) {}

  /** Whether the next flush is made inline. */
  inline(): boolean {
    const { window, quickShare, coolMs } = this.limits;
    return (
      this.quick.length === window &&
      this.quickCount >= window * quickShare &&
      this.now() - this.stallAt >= coolMs
    );
  }

  /** The time a flush starts, to hand back to `finished`. */
  started(): number {
    return this.now();
  }

  /** Learns from a flush started at `t0` (by `started`) that has just finished, `inline` or not. */
  finished(t0: number, inline: boolean): void {
    this.note(this.now() - t0, inline);
  }

  /** Learns from one flush that took `ms` (a thread-pool flush's time includes the hand-off). */
  note(ms: number, inline: boolean): void {
    const quick = ms < this.limits.quickMs;
    if (this.quick.length < this.limits.window) this.quick.push(quick);
    else {
      if (this.quick[this.next]) this.quickCount -= 1;
      this.quick[this.next] = quick;
      this.next = (this.next + 1) % this.limits.window;
    }
    if (quick) this.quickCount += 1;
    if (inline && ms >= this.limits.stallMs) this.stallAt = this.now();
  }
}
