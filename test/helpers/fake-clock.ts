import type { Clock, TimerHandle } from '../../app/clock.js';

interface FakeTimer {
  readonly id: number;
  readonly due: number;
  readonly fn: () => void;
}

/**
 * A manual Clock for tests: time moves only when the test calls advance(). Timers fire in due-time
 * order (ties in the order they were set), each seeing now() equal to its own due time, and timers
 * set by a firing callback fire in the same advance() if they fall due within it.
 */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, FakeTimer>();

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.#seq;
    // Like the real setTimeout: a negative or NaN delay means "as soon as possible".
    const delay = Number.isFinite(ms) && ms > 0 ? ms : 0;
    this.#timers.set(id, { id, due: this.#now + delay, fn });
    return { fakeTimerId: id } as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    const id = (handle as { fakeTimerId?: unknown } | undefined)?.fakeTimerId;
    if (typeof id === 'number') this.#timers.delete(id);
  }

  /** Move time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    if (!(ms >= 0))
      throw new RangeError(`FakeClock.advance needs a non-negative duration, got ${ms}`);
    const target = this.#now + ms;
    for (;;) {
      const next = this.#nextDue(target);
      if (!next) break;
      this.#timers.delete(next.id);
      this.#now = next.due;
      next.fn();
    }
    this.#now = target;
  }

  /** Jump to the next timer's due time and fire what is due then; false when nothing is pending. */
  runNext(): boolean {
    const next = this.#nextDue(Infinity);
    if (!next) return false;
    this.advance(next.due - this.#now);
    return true;
  }

  /** How many timers are set and not yet fired or cleared: 0 proves nothing was left behind. */
  pendingTimers(): number {
    return this.#timers.size;
  }

  #nextDue(limit: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const timer of this.#timers.values()) {
      if (timer.due > limit) continue;
      if (!best || timer.due < best.due || (timer.due === best.due && timer.id < best.id))
        best = timer;
    }
    return best;
  }
}
