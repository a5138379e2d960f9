import type { Clock, TimerHandle } from '../clock.js';

/**
 * Passes on a stream of states per key at most once per `windowMs`: the first after a quiet spell
 * at once, then only the newest one when the window ends (none if nothing new came). For state a
 * server may send as fast as its socket goes (a reply's mood), where only the latest matters: a
 * window then gets a few updates a second, not one per frame. Equal states in a row are dropped.
 */
export class Newest<T> {
  private readonly windows = new Map<string, { timer: TimerHandle; held?: T }>();
  private readonly last = new Map<string, T>();
  private disposed = false;

  constructor(
    private readonly clock: Clock,
    private readonly windowMs: number,
    private readonly send: (value: T) => void,
    private readonly same: (a: T, b: T) => boolean = Object.is,
  ) {}

  put(key: string, value: T): void {
    if (this.disposed) return;
    const window = this.windows.get(key);
    if (window) {
      window.held = value;
      return;
    }
    const last = this.last.get(key);
    if (last !== undefined && this.same(last, value)) return;
    this.out(key, value);
  }

  /** Forget `key` (its connection is gone): nothing held for it is sent. */
  forget(key: string): void {
    const window = this.windows.get(key);
    if (window) this.clock.clearTimeout(window.timer);
    this.windows.delete(key);
    this.last.delete(key);
  }

  dispose(): void {
    this.disposed = true;
    for (const key of [...this.windows.keys()]) this.forget(key);
    this.last.clear();
  }

  private out(key: string, value: T): void {
    this.last.set(key, value);
    const window: { timer: TimerHandle; held?: T } = {
      timer: this.clock.setTimeout(() => {
        this.windows.delete(key);
        const held = window.held;
        if (held !== undefined && !this.same(this.last.get(key) as T, held)) this.out(key, held);
      }, this.windowMs),
    };
    this.windows.set(key, window);
    this.send(value);
  }
}
