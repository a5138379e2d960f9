/**
 * Recent `mcp/tool/execute` calls, so none runs twice (protocols/robot-rpc.md, Semantics).
 *
 * The reference server sends every execute twice: once as a request with an `id` (it waits for the
 * answer) and once as an id-less notification with the same tool and input (nobody waits), in
 * either order. Each pair is one call from the model, so it must run once, and the copy with the
 * id must get exactly one response — with the result of the one run, whichever copy started it.
 *
 * Two copies are twins when their tool and canonical input are equal and the second arrives
 * within `windowMs` of the first:
 *
 * | arrives  | recent identical call                 | verdict                                          |
 * |----------|---------------------------------------|--------------------------------------------------|
 * | with id  | this same id seen before              | `repeat`: recorded, not run, not answered again  |
 * | with id  | an id-less one not yet paired         | `twin`: recorded, not run, answered with its run |
 * | with id  | none                                  | `run`, then answered                             |
 * | id-less  | one with an id not yet paired         | `duplicate`: recorded, not run                   |
 * | id-less  | any other                             | `duplicate`: recorded, not run                   |
 * | id-less  | none                                  | `run` (nobody to answer)                         |
 *
 * So two genuine identical calls in a row (both pairs) still run twice, once each: every copy
 * with an id that finds no unpaired id-less twin is a call of its own. An id-less copy never
 * starts a second identical run inside the window: its result could not be reported anyway, and
 * running a write twice unasked is worse than skipping a repeat nobody waits for.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../audit/redact.js';
import type { Clock } from '../../clock.js';
import type { JsonRpcId } from '../kit/jsonrpc.js';
import type { ToolOutcome } from './messages.js';

export const DEFAULT_DUPLICATE_WINDOW_MS = 5000;
/** Ids remembered to spot a repeated request id (far more than a window ever holds). */
const ID_MEMORY = 256;
/**
 * Runs remembered at most, whatever the window: a server can hold this much of our memory and no
 * more (a few MB). A voice model's calls come a few a second; only a flood of thousands a second
 * fills it, and then a twin arriving after 10 000 later runs is no longer recognised as one.
 */
export const MAX_WINDOW_ENTRIES = 10_000;

export interface RecentCall {
  readonly callId: string;
  /** Settled by whoever ran the call; a twin with an id is answered from it. */
  readonly outcome: Promise<ToolOutcome>;
  settle(outcome: ToolOutcome): void;
}

export type Verdict =
  | { action: 'run'; call: RecentCall }
  | { action: 'twin'; of: string; outcome: Promise<ToolOutcome> }
  /**
   * `paired`: this copy is the one twin of a call with an id (the reference server sends each
   * execute twice); a further copy of the same call is not paired.
   */
  | { action: 'duplicate'; of: string; paired: boolean }
  | { action: 'repeat'; of: string };

interface Entry extends RecentCall {
  key: string;
  at: number;
  hasId: boolean;
}

/**
 * The window's entries of one key: how many, the newest, and those not yet paired with a twin, by
 * kind, oldest first. A copy pairs with the oldest unpaired one of the other kind, so pairing and
 * expiry both take from the front, and an arrival costs the same however many identical executes
 * the window holds (a server repeating one call thousands of times within it, say).
 */
interface Slot {
  count: number;
  latest: Entry;
  idless: Entry[];
  withId: Entry[];
}

export class RecentExecutes {
  /**
   * Every entry of the window in arrival (= time) order, expired ones dropped from the front, and
   * the same entries by key: each arrival costs the same however busy the window is.
   */
  private queue: Entry[] = [];
  private head = 0;
  private readonly byKey = new Map<string, Slot>();
  private readonly seenIds = new Set<string>();

  constructor(
    private readonly windowMs: number,
    private readonly clock: Clock,
    /** The most runs the window holds; a server flooding executes expires the oldest early. */
    private readonly maxEntries = MAX_WINDOW_ENTRIES,
  ) {}

  /**
   * Decide what to do with one execute. `freshCallId` names an id-less call that will run (the
   * audit log needs an id for it).
   */
  arrive(
    tool: string,
    input: unknown,
    id: JsonRpcId | undefined,
    freshCallId: () => string,
  ): Verdict {
    const now = this.clock.now();
    this.expire(now);
    // A digest, not the input itself: a window of large inputs must not be kept whole.
    const key = `${tool}\u0000${createHash('sha256').update(canonicalJson(input)).digest('base64')}`;
    const same = this.byKey.get(key);

    if (id !== undefined) {
      const callId = String(id);
      if (this.seenIds.has(callId)) return { action: 'repeat', of: callId };
      this.remember(callId);
      const idless = same?.idless.shift();
      if (idless) return { action: 'twin', of: idless.callId, outcome: idless.outcome };
      return { action: 'run', call: this.add(key, now, callId, true) };
    }

    const withId = same?.withId.shift();
    if (withId) return { action: 'duplicate', of: withId.callId, paired: true };
    if (same) return { action: 'duplicate', of: same.latest.callId, paired: false };
    return { action: 'run', call: this.add(key, now, freshCallId(), false) };
  }

  /** A new link: the server that sent these is gone, and so are their twins. */
  clear(): void {
    this.queue = [];
    this.head = 0;
    this.byKey.clear();
    this.seenIds.clear();
  }

  private expire(now: number): void {
    while (
      this.head < this.queue.length &&
      (now - this.queue[this.head]!.at > this.windowMs ||
        this.queue.length - this.head > this.maxEntries)
    ) {
      const old = this.queue[this.head++]!;
      const slot = this.byKey.get(old.key);
      if (!slot) continue;
      // Entries of one key are in time order too: an expired one still unpaired is the first
      // of its list (everything older has expired or paired before it).
      if (slot.idless[0] === old) slot.idless.shift();
      if (slot.withId[0] === old) slot.withId.shift();
      slot.count -= 1;
      if (slot.count === 0) this.byKey.delete(old.key);
    }
    // Drop the expired prefix now and then, so the array does not grow without end.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private add(key: string, at: number, callId: string, hasId: boolean): Entry {
    let settle: (outcome: ToolOutcome) => void = () => undefined;
    const outcome = new Promise<ToolOutcome>((resolve) => {
      settle = resolve;
    });
    const entry: Entry = { key, at, callId, hasId, outcome, settle };
    this.queue.push(entry);
    let slot = this.byKey.get(key);
    if (!slot) {
      slot = { count: 0, latest: entry, idless: [], withId: [] };
      this.byKey.set(key, slot);
    }
    slot.count += 1;
    slot.latest = entry;
    (hasId ? slot.withId : slot.idless).push(entry);
    return entry;
  }

  private remember(callId: string): void {
    this.seenIds.add(callId);
    if (this.seenIds.size > ID_MEMORY) {
      const oldest = this.seenIds.values().next().value;
      if (oldest !== undefined) this.seenIds.delete(oldest);
    }
  }
}
