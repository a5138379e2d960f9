/**
 * One lifecycle vocabulary (DESIGN §6, after VS Code's `lifecycle.ts`): whatever must be undone —
 * a listener, a timer, a socket — is a `Disposable`, and a class keeps what it owns in one
 * `DisposableStore` that it disposes when it ends. So "nothing left after stop" is one call, and a
 * test can count what is left.
 */
import type { Clock } from './clock.js';

export interface Disposable {
  dispose(): void;
}

/** `fn` as a Disposable that runs it at most once. */
export function toDisposable(fn: () => void): Disposable {
  let done = false;
  return {
    dispose() {
      if (done) return;
      done = true;
      fn();
    },
  };
}

/** A timer as a Disposable: disposing it before it fires cancels it. */
export function disposableTimeout(clock: Clock, ms: number, fn: () => void): Disposable {
  const handle = clock.setTimeout(fn, ms);
  return toDisposable(() => clock.clearTimeout(handle));
}

/**
 * What one owner holds. Adding to a disposed store disposes the item at once (an owner that has
 * ended must not start holding things again); a failing `dispose()` does not keep the others
 * from being disposed.
 */
export class DisposableStore implements Disposable {
  private readonly items = new Set<Disposable>();
  private disposed = false;

  add<T extends Disposable>(item: T): T {
    if (this.disposed) item.dispose();
    else this.items.add(item);
    return item;
  }

  /** Dispose one item now and forget it. */
  delete(item: Disposable): void {
    if (this.items.delete(item)) item.dispose();
  }

  /** Dispose everything held so far; the store stays usable (per-socket state between sockets). */
  clear(): void {
    const items = [...this.items];
    this.items.clear();
    const errors: unknown[] = [];
    for (const item of items) {
      try {
        item.dispose();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, 'several disposals failed');
  }

  /** Dispose everything, for good. */
  dispose(): void {
    this.disposed = true;
    this.clear();
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** How many items are held: zero after `clear()`/`dispose()`. */
  get size(): number {
    return this.items.size;
  }
}
