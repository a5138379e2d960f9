/**
 * How long a broken link waits before it dials again, the same rule for the Advent TCP link and
 * every WebSocket link (DESIGN §3): exponential from `backoffInitialMs` by `backoffFactor`, spread
 * by ± `jitter` so many clients do not reconnect in step, and never longer than `backoffMaxMs`
 * (the cap holds after the jitter, so "at most 60 s" is what the user is told and gets).
 */

export interface BackoffTiming {
  backoffInitialMs: number;
  backoffMaxMs: number;
  backoffFactor: number;
  /** ± this fraction of the delay. */
  jitter: number;
}

/**
 * The delay after failed attempt number `attempt` (1 = the first), in whole milliseconds, never
 * negative. `random` is a number in [0, 1) (`IdSource.random()`), so tests can pin the jitter.
 */
export function backoffDelay(attempt: number, timing: BackoffTiming, random: number): number {
  const { backoffInitialMs, backoffFactor, backoffMaxMs, jitter } = timing;
  const base = Math.min(backoffMaxMs, backoffInitialMs * backoffFactor ** Math.max(0, attempt - 1));
  return Math.min(backoffMaxMs, Math.max(0, Math.round(base * (1 + jitter * (2 * random - 1)))));
}
