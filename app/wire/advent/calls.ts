/**
 * The calls one Advent connection has carried, so no call_id runs twice on it (issue 10 item 9):
 * a repeat while the call runs is ignored, a repeat after it is answered again without running.
 *
 * Every answered id is kept for the connection's life — a fixed-size "last 256" memory let an old
 * id run again once it fell out. The memory is bounded in bytes instead: ids up to
 * `ANSWERED_ID_BYTES`, and the results to resend up to `RESULT_CACHE_BYTES` (oldest results
 * forgotten first; a repeat whose result is forgotten is still refused, never run). When the ids
 * alone fill their budget the connection has carried tens of thousands of calls, and the session
 * starts a fresh one, where the server's ids start over too.
 */

/** Ids of answered calls kept per connection (≈ 65 000 ids of 8 characters). */
export const ANSWERED_ID_BYTES = 4 * 1024 * 1024;
/** Results kept to answer a repeat with the same result. */
export const RESULT_CACHE_BYTES = 1024 * 1024;
/** What one remembered id costs beyond its characters (Set/Map entry, string header). */
const ENTRY_OVERHEAD = 48;

export type Seen =
  | { kind: 'new' }
  | { kind: 'running' }
  | { kind: 'answered'; result: string | undefined }
  /** The id memory is full: run nothing more on this connection. */
  | { kind: 'full' };

export class CallLedger {
  private readonly running = new Set<string>();
  private readonly answered = new Set<string>();
  private readonly results = new Map<string, string>();
  /**
   * The results' ids oldest first, from `oldest` on. Not the Map's own order: a Map iterated from
   * its start after many deletions walks every deleted slot again until it is rehashed, which on
   * a long connection made each answer cost time proportional to the calls before it.
   */
  private order: string[] = [];
  private oldest = 0;
  private idBytes = 0;
  private resultBytes = 0;

  constructor(
    private readonly idBudget = ANSWERED_ID_BYTES,
    private readonly resultBudget = RESULT_CACHE_BYTES,
  ) {}

  seen(callId: string): Seen {
    if (this.running.has(callId)) return { kind: 'running' };
    if (this.answered.has(callId)) return { kind: 'answered', result: this.results.get(callId) };
    if (this.idBytes + cost(callId) > this.idBudget) return { kind: 'full' };
    return { kind: 'new' };
  }

  begin(callId: string): void {
    this.running.add(callId);
  }

  /** The call is answered with `result` (or was lost: `undefined`, still never run again). */
  finish(callId: string, result: string | undefined): void {
    this.running.delete(callId);
    if (this.answered.has(callId)) return;
    this.answered.add(callId);
    this.idBytes += cost(callId);
    if (result === undefined || cost(result) > this.resultBudget) return;
    this.results.set(callId, result);
    this.order.push(callId);
    this.resultBytes += cost(result);
    while (this.resultBytes > this.resultBudget && this.oldest < this.order.length) {
      const id = this.order[this.oldest++] as string;
      this.resultBytes -= cost(this.results.get(id) as string);
      this.results.delete(id);
    }
    // Drop the forgotten ids' slots once they are most of the array.
    if (this.oldest > 1024 && this.oldest * 2 > this.order.length) {
      this.order = this.order.slice(this.oldest);
      this.oldest = 0;
    }
  }

  /** Bytes held (ids and results), for tests and the bound. */
  get bytes(): number {
    return this.idBytes + this.resultBytes;
  }
}

function cost(text: string): number {
  return text.length * 2 + ENTRY_OVERHEAD;
}
