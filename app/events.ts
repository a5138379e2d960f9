/**
 * A minimal typed event emitter. The core emits plain events; hosts (CLI, Electron, WebSocket
 * bridge) subscribe. A throwing listener is isolated so one bad subscriber cannot break the core.
 */
import type { Disposable } from './lifecycle.js';

export type Listener<T> = (payload: T) => void;

/**
 * What `on()` returns: a Disposable (to keep in a DisposableStore) that is also callable, so
 * `const off = e.on(…); off()` keeps working.
 */
export type Subscription = Disposable & (() => void);

export class Emitter<Events extends Record<string, unknown>> {
  private readonly listeners = new Map<keyof Events, Set<Listener<never>>>();

  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): Subscription {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    // Each subscription is its own entry, so subscribing one function twice needs two disposals.
    const entry: Listener<never> = (payload: never) => (listener as Listener<never>)(payload);
    set.add(entry);
    const off = (): void => {
      const current = this.listeners.get(event);
      if (!current?.delete(entry)) return;
      if (current.size === 0) this.listeners.delete(event);
    };
    return Object.assign(off, { dispose: off });
  }

  emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        (listener as Listener<Events[K]>)(payload);
      } catch (err) {
        // Surfacing through the console is the only safe option: re-emitting could loop.
        console.error(`listener for '${String(event)}' failed:`, err);
      }
    }
  }

  listenerCount<K extends keyof Events>(event: K): number {
    return this.listeners.get(event)?.size ?? 0;
  }

  /** Listeners of every event together: what a test checks to see that nothing leaks. */
  get totalListeners(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }
}
