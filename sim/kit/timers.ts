import type { Clock, TimerHandle } from '../../app/clock.js';

/**
 * Every timer the simulator sets goes through one of these, so `stop()` can prove it left nothing
 * behind: a forgotten idle or close timer would keep a test worker alive or fire into a dead socket.
 */
export class TimerSet {
  private readonly live = new Set<TimerHandle>();

  constructor(private readonly clock: Clock) {}

  set(fn: () => void, ms: number): TimerHandle {
    const handle = this.clock.setTimeout(() => {
      this.live.delete(handle);
      fn();
    }, ms);
    this.live.add(handle);
    return handle;
  }

  clear(handle: TimerHandle | undefined): void {
    if (handle === undefined) return;
    this.live.delete(handle);
    this.clock.clearTimeout(handle);
  }

  clearAll(): void {
    for (const handle of this.live) this.clock.clearTimeout(handle);
    this.live.clear();
  }

  get size(): number {
    return this.live.size;
  }
}
