/**
 * How fast one connection's calls may start (DESIGN §1.7). Every call a server makes is recorded
 * in the audit log and shown to the user, so a server calling as fast as its socket goes (a
 * prompt-injected model in a loop, a broken client) would grow the log by megabytes a second and
 * bury the conversation under tool cards. Its calls are paced instead of refused: a refusal is
 * recorded too, and answering one at once would invite the next.
 *
 * The pace is a generic cell rate algorithm (GCRA) per connection: `burst` calls may start at
 * once after a quiet spell, then `perSecond`. A call past that waits its turn before it reaches
 * the gate; its socket's bound on calls in flight (`MAX_CALLS_IN_FLIGHT`, the MCP endpoint's
 * `MAX_CALLS_PER_SESSION`) stops reading the server meanwhile, so the wait holds a bounded number
 * of calls. A call whose server stops waiting stops waiting too.
 *
 * Only servers are paced: the user's own runs ("Try it") never are.
 */
import type { Clock } from './clock.js';

export interface CallPaceLimits {
  /** Calls that may start at once after a quiet spell. */
  burst: number;
  /** Calls that may start per second once the burst is spent. */
  perSecond: number;
}

/**
 * A voice assistant makes a call or two per spoken turn, and an MCP client a few dozen in an
 * agentic burst. Sixty at once and ten a second after that leave both untouched, and bound a
 * flood to ten audit records a second.
 */
export const DEFAULT_CALL_PACE: CallPaceLimits = { burst: 60, perSecond: 10 };

/**
 * A server's status and protocol lines: a turn brings a few, a reconnect a few more. Twenty at
 * once and five a second leave those untouched; past that they are dropped, not delayed.
 */
export const SERVER_LINE_PACE: CallPaceLimits = { burst: 20, perSecond: 5 };

/** Connections whose pace is remembered before idle ones are forgotten (each a few numbers). */
const SWEEP_AT = 256;

export interface PaceTurn {
  /** How long this call waits before it may start (0: now). */
  waitMs: number;
  /** This call is the first of a streak that has to wait (the user is told once per streak). */
  startsStreak: boolean;
}

export class CallPace {
  /** Per connection: when its bucket is full again (GCRA's theoretical arrival time). */
  private readonly full = new Map<string, number>();
  /** Connections told they are paced, until their bucket refills. */
  private readonly paced = new Set<string>();
  private last = -Infinity;
  private skew = 0;
  private readonly interval: number;
  private readonly tolerance: number;

  constructor(
    private readonly clock: Pick<Clock, 'now'>,
    readonly limits: CallPaceLimits = DEFAULT_CALL_PACE,
  ) {
    if (!(limits.burst >= 1) || !(limits.perSecond > 0))
      throw new RangeError('a call pace needs a burst of at least 1 and a positive rate');
    this.interval = 1000 / limits.perSecond;
    this.tolerance = (limits.burst - 1) * this.interval;
  }

  /**
   * Take the next turn of `connectionId`. The turn is taken whether or not the call then waits for
   * it: a server that gives up on calls it flooded does not get them back.
   */
  take(connectionId: string): PaceTurn {
    const now = this.time();
    const tat = this.due(connectionId, now);
    const waitMs = Math.max(0, tat - this.tolerance - now);
    this.commit(connectionId, tat, now);
    return { waitMs, startsStreak: waitMs > 0 && this.streak(connectionId) };
  }

  /**
   * Take the next turn of `connectionId` only if it is free now, for what is dropped rather than
   * delayed (a server's status and protocol lines): a line past the pace takes nothing, so the
   * server gets lines through again as soon as the pace allows. `startsStreak` as for `take`.
   */
  admit(connectionId: string): { admitted: boolean; startsStreak: boolean } {
    const now = this.time();
    const tat = this.due(connectionId, now);
    if (tat - this.tolerance > now)
      return { admitted: false, startsStreak: this.streak(connectionId) };
    this.commit(connectionId, tat, now);
    return { admitted: true, startsStreak: false };
  }

  /** When the connection's next turn is due (GCRA's theoretical arrival time, `now` at the latest). */
  private due(connectionId: string, now: number): number {
    const stored = this.full.get(connectionId);
    if (stored !== undefined && stored > now) return stored;
    // A full bucket ends the streak the user was told of.
    this.paced.delete(connectionId);
    return now;
  }

  /** Take the turn due at `tat`. */
  private commit(connectionId: string, tat: number, now: number): void {
    if (this.full.size >= SWEEP_AT && !this.full.has(connectionId)) this.sweep(now);
    this.full.set(connectionId, tat + this.interval);
  }

  /** Whether a turn that has to wait starts a streak (the first since the bucket was full). */
  private streak(connectionId: string): boolean {
    if (this.paced.has(connectionId)) return false;
    this.paced.add(connectionId);
    return true;
  }

  /**
   * The clock's time, made to run on when the wall clock steps back (a time sync): a connection
   * would otherwise wait out the step, however quiet it had been.
   */
  private time(): number {
    const now = this.clock.now();
    if (now < this.last) this.skew += this.last - now;
    this.last = now;
    return now + this.skew;
  }

  /** Connections being remembered (for the bound's test). */
  get size(): number {
    return this.full.size;
  }

  /** Forget every connection whose bucket is full again: it starts over exactly as it would. */
  private sweep(now: number): void {
    for (const [id, tat] of this.full)
      if (tat <= now) {
        this.full.delete(id);
        this.paced.delete(id);
      }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts; never rejects. */
export function paceWait(
  clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clock.clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
