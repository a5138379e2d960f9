/**
 * Whether the audit log's next flush (fdatasync) is made on the flush thread, with the event loop
 * polling for its answer (flush-thread.ts), or handed to libuv's thread pool.
 *
 * Handing a flush to the thread pool costs two wake-ups between threads on every call: the pool's
 * thread to run it, then the event loop to hear it is done, from sleep. On a fast disk that costs
 * about as much again as the flush itself. The flush thread avoids both, but the event loop spends
 * CPU polling while it waits (at most FLUSH_THREAD.pollMs per flush), worth it only while flushes
 * are quick. So a flush goes to the flush thread only while the disk proves quick: while at least
 * `quickShare` of the last `window` flushes (all timed, whichever way they were made) took under
 * `quickMs`. A disk that is never quick never costs a poll; one that turns slow (a busy laptop
 * drive, a synced folder) goes back to the thread pool within a window of flushes. The share, not
 * an average, so that a quick disk's rare slow flush (ext4 commits its journal every few seconds,
 * and the fdatasync that meets the commit waits for it) does not send every flush to the pool.
 *
 * Nothing here guards the event loop against a slow flush: on the flush thread, as in the pool, a
 * flush never blocks it (the inline flush this replaced did, and needed a cool-off after a stall).
 */
export interface FlushPaceLimits {
  /** A flush quicker than this (ms) counts as quick. */
  quickMs: number;
  /** How many of the latest flushes are remembered; the pool takes them until this many are timed. */
  window: number;
  /** The share of them that must have been quick. */
  quickShare: number;
}

export const FLUSH_PACE: FlushPaceLimits = {
  quickMs: 1,
  window: 32,
  quickShare: 0.75,
};

export class FlushPace {
  /** Whether each of the latest flushes was quick, oldest overwritten first. */
  private readonly wasQuick: boolean[] = [];
  private next = 0;
  private quickCount = 0;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly limits: FlushPaceLimits = FLUSH_PACE,
  ) {}

  /** Whether the disk is quick now: the next flush is made on the flush thread. */
  quick(): boolean {
    const { window, quickShare } = this.limits;
    return this.wasQuick.length === window && this.quickCount >= window * quickShare;
  }

  /** The time a flush starts, to hand back to `finished`. */
  started(): number {
    return this.now();
  }

  /** Learns from a flush started at `t0` (by `started`) that has just finished. */
  finished(t0: number): void {
    this.note(this.now() - t0);
  }

  /** Learns from one flush that took `ms` (a thread-pool flush's time includes the hand-off). */
  note(ms: number): void {
    const quick = ms < this.limits.quickMs;
    if (this.wasQuick.length < this.limits.window) this.wasQuick.push(quick);
    else {
      if (this.wasQuick[this.next]) this.quickCount -= 1;
      this.wasQuick[this.next] = quick;
      this.next = (this.next + 1) % this.limits.window;
    }
    if (quick) this.quickCount += 1;
  }
}
