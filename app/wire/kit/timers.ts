/**
 * Timers kept by name, for the classes that juggle several at once — the links (connect,
 * handshake, ping, pong, healthy, reconnect…) and the XiaoZhi sessions (hello, keep-alive, list
 * waits): setting a name again replaces its timer, a timer that fired is forgotten, and
 * `clearAll()` leaves nothing behind on stop.
 */
import type { Clock, TimerHandle } from '../../clock.js';
import type { Disposable } from '../../lifecycle.js';

/** `Name` lists the timers a class keeps, so a misspelt name does not compile. */
export class NamedTimers<Name extends string = string> implements Disposable {
  private readonly timers = new Map<Name, TimerHandle>();

  constructor(private readonly clock: Clock) {}

  /** Run `fn` after `ms`, replacing any timer of that name. */
  set(name: Name, ms: number, fn: () => void): void {
    this.clear(name);
    this.timers.set(
      name,
      this.clock.setTimeout(() => {
        this.timers.delete(name);
        fn();
      }, ms),
    );
  }

  /** Whether a timer of that name is waiting (set, not yet fired or cleared). */
  has(name: Name): boolean {
    return this.timers.has(name);
  }

  clear(name: Name): void {
    const t = this.timers.get(name);
    if (t !== undefined) {
      this.clock.clearTimeout(t);
      this.timers.delete(name);
    }
  }

  clearAll(): void {
    for (const t of this.timers.values()) this.clock.clearTimeout(t);
    this.timers.clear();
  }

  dispose(): void {
    this.clearAll();
  }

  /** How many timers are waiting: zero after a stop (tests check that nothing is left behind). */
  get size(): number {
    return this.timers.size;
  }
}
