/**
 * Time as a dependency. Timeouts, backoff, heartbeats and prompt expiry all go through a Clock so
 * tests can drive them (vitest fake timers work with the real clock too, but an explicit seam keeps
 * the core honest about what depends on time).
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
}

export type TimerHandle = { readonly __timer: unique symbol } | ReturnType<typeof setTimeout>;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // A pending timer must never keep the process alive on its own: stop() is what ends a session.
    t.unref?.();
    return t;
  },
  clearTimeout: (handle) => {
    if (handle !== undefined) clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};
