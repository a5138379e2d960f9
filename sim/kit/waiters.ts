/**
 * The waits every simulator offers its tests (`waitFor`, `waitForConnection`, …), in one place.
 * A wait is a probe, re-run each time the simulator records something (`poke`), so it resolves on
 * the very event that satisfies it rather than on a polling tick; `stop()` fails whoever still waits
 * so a test never hangs on a stopped server.
 *
 * The timeout is wall-clock `setTimeout` on purpose, not the simulator's injected clock: a test
 * that drives a fake clock must still be told, in real time, that what it waits for never came.
 */

/** How long a wait lasts unless the test says otherwise. */
export const DEFAULT_WAIT_MS = 5000;

interface Waiter {
  check(): boolean;
  fail(err: Error): void;
}

export class Waiters {
  private readonly waiting = new Set<Waiter>();
  private stopped = false;

  /** `name` starts every error message (`AdventSim: waited …`, `AdventSim stopped`). */
  constructor(private readonly name: string) {}

  /** Resolves with the first value `probe` returns (now or after a `poke`); `why` explains a timeout. */
  until<T>(probe: () => T | undefined, timeoutMs: number, why: () => string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const first = probe();
      if (first !== undefined) return resolve(first);
      if (this.stopped) return reject(new Error(`${this.name} stopped`));
      const timer = setTimeout(() => {
        this.waiting.delete(waiter);
        reject(new Error(`${this.name}: waited ${timeoutMs} ms: ${why()}`));
      }, timeoutMs);
      const waiter: Waiter = {
        check: () => {
          const value = probe();
          if (value === undefined) return false;
          clearTimeout(timer);
          this.waiting.delete(waiter);
          resolve(value);
          return true;
        },
        fail: (err) => {
          clearTimeout(timer);
          this.waiting.delete(waiter);
          reject(err);
        },
      };
      this.waiting.add(waiter);
    });
  }

  /**
   * The first item of `list` (already in it or pushed later) that satisfies `pred`. Each item is
   * looked at once, so a wait over hours of recorded frames does not rescan them on every poke.
   */
  firstOf<T>(
    list: readonly T[],
    pred: (item: T) => boolean,
    timeoutMs: number,
    why: () => string,
  ): Promise<T> {
    let next = 0;
    return this.until(
      () => {
        for (; next < list.length; next++) {
          const item = list[next]!;
          if (pred(item)) return item;
        }
        return undefined;
      },
      timeoutMs,
      why,
    );
  }

  /** Something was recorded: re-run every probe. */
  poke(): void {
    for (const waiter of [...this.waiting]) waiter.check();
  }

  /** The simulator stopped: fail every wait, and every wait asked for from now on. */
  stop(): void {
    this.stopped = true;
    for (const waiter of [...this.waiting]) waiter.fail(new Error(`${this.name} stopped`));
  }
}
