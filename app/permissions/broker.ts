import type { Clock, TimerHandle } from '../clock.js';
import {
  PROMPT_ANSWERS,
  type PendingPrompt,
  type PromptAnswer,
  type PromptResolution,
} from '../contract/policy.js';
import { Emitter, type Listener } from '../events.js';
import type { IdSource } from '../ids.js';

/** A UI (window, headless page, TTY) able to show prompts to the user. */
export interface Answerer {
  name: string;
}

export type PromptRequest = Omit<PendingPrompt, 'id' | 'expiresAt'>;

/** The answers a caller-side asker may give: never "always" (DESIGN §3: only the app's own UI grants that). */
export type AskerAnswer = Exclude<PromptAnswer, 'always'>;
const ASKER_ANSWERS: ReadonlySet<string> = new Set<AskerAnswer>(['once', 'session', 'deny']);

/**
 * What an asker's answer may do: allow this one call, or refuse it. The answer comes from the
 * caller's own UI (an MCP client answering its own `elicitation/create`), which the agent cannot
 * tell from the caller itself, so it must never be remembered: a remembered grant is process-wide
 * and would let every later call, from any connection (voice servers included), run unasked.
 * Anything unrecognised (an "always" above all) is no answer at all.
 */
function askerResolution(answer: unknown): PromptResolution {
  if (!ASKER_ANSWERS.has(answer as string)) return 'cancelled';
  return answer === 'deny' ? 'deny' : 'once';
}

/**
 * Who can answer one call's question when no UI is attached: the connection it came on, asking
 * its own user (an MCP client's `elicitation/create`). It answers through the broker like a UI,
 * so the prompt keeps its id, its timeout and its place in `pending()`; `signal` aborts when the
 * prompt ends some other way (a window answered, it timed out, the call was withdrawn).
 * Resolving undefined means nobody there could answer. Its yes covers that one call only: a
 * "session" from it resolves the prompt as 'once' (askerResolution).
 */
export interface Asker {
  ask(prompt: PendingPrompt, signal: AbortSignal): Promise<AskerAnswer | undefined>;
}

export interface AskOptions {
  /** The caller withdrew the call: the prompt ends as 'cancelled'. */
  signal?: AbortSignal;
  /** Asked when no UI is attached (see Asker). */
  asker?: Asker;
}

export interface BrokerOptions {
  clock: Clock;
  ids: IdSource;
  /** Read at each ask, so a settings change applies to the next prompt. */
  timeoutMs: () => number;
  /** How long pending prompts wait for a UI to come back after the last one left. */
  reattachGraceMs?: number;
}

export type BrokerEvents = {
  prompt: PendingPrompt;
  promptResolved: { id: string; resolution: PromptResolution };
};

/** Used when the configured timeout is not a positive number: a prompt must always end. */
export const FALLBACK_PROMPT_TIMEOUT_MS = 60_000;

/**
 * A page reload or a window re-created detaches the last UI for a moment. Long enough for a
 * loopback page to load again, short enough that a server is not left waiting when the window is
 * really gone. A prompt's own expiry still ends it first when that comes sooner.
 */
export const REATTACH_GRACE_MS = 5_000;

interface Entry {
  prompt: PendingPrompt;
  timer: TimerHandle | undefined;
  resolve: (resolution: PromptResolution) => void;
  /** Ends the asker's question and the withdrawal listener (set when either is in use). */
  end?: () => void;
  /** An asker of the call's own connection is answering: a UI leaving does not end it. */
  askerAnswers?: boolean;
}

/**
 * Pending permission prompts (DESIGN §3 Broker). Every prompt ends exactly once: answered,
 * timed out, cancelled (no UI, last UI gone, shutdown) or withdrawn (the server stopped waiting:
 * it cancelled the call, or its connection ended). Each of those is a "no" for the caller except
 * an explicit once/session/always answer.
 */
export class Broker {
  readonly #clock: Clock;
  readonly #ids: IdSource;
  readonly #timeoutMs: () => number;
  // A Map iterates in insertion order: that is the arrival order pending() promises.
  readonly #entries = new Map<string, Entry>();
  readonly #answerers = new Set<Answerer>();
  readonly #events = new Emitter<BrokerEvents>();
  readonly #graceMs: number;
  /** Set while no UI is attached but one left less than #graceMs ago. */
  #graceTimer: TimerHandle | undefined;
  #disposed = false;

  constructor({ clock, ids, timeoutMs, reattachGraceMs = REATTACH_GRACE_MS }: BrokerOptions) {
    this.#clock = clock;
    this.#ids = ids;
    this.#timeoutMs = timeoutMs;
    this.#graceMs = Math.max(0, reattachGraceMs);
  }

  on<K extends keyof BrokerEvents>(event: K, listener: Listener<BrokerEvents[K]>): () => void {
    return this.#events.on(event, listener);
  }

  /**
   * Register a UI able to answer. Returns its detach function (safe to call twice). When the last
   * UI detaches, pending prompts wait a short grace for one to attach again (a reloaded page gets
   * them from its snapshot); if none does, nobody can answer any more, so every pending prompt is
   * cancelled then instead of making the server wait for the full timeout.
   */
  attach(answerer: Answerer = { name: 'ui' }): () => void {
    // A fresh object per attachment: the same UI attached twice counts twice.
    const token: Answerer = { name: answerer.name };
    this.#answerers.add(token);
    this.#clock.clearTimeout(this.#graceTimer);
    this.#graceTimer = undefined;
    return () => {
      if (!this.#answerers.delete(token)) return;
      if (this.#answerers.size === 0 && !this.#disposed) this.#startGrace();
    };
  }

  /** How long the next prompt will wait for an answer (servers' waits are sized by it). */
  timeoutMs(): number {
    const configured = this.#timeoutMs();
    return Number.isFinite(configured) && configured > 0 ? configured : FALLBACK_PROMPT_TIMEOUT_MS;
  }

  hasAnswerer(): boolean {
    return this.#answerers.size > 0;
  }

  answererNames(): string[] {
    return [...this.#answerers].map((a) => a.name);
  }

  /**
   * Ask the user. Never rejects. With no UI attached (and none that just left) it resolves
   * 'cancelled' at once and shows nothing (the caller tells the server that no one could answer).
   * When `options.signal` aborts (the server stopped waiting for the call), the prompt ends as
   * 'withdrawn': it leaves every window (and the asker's question), and a later answer is ignored.
   */
  ask(request: PromptRequest, options: AskOptions = {}): Promise<PromptResolution> {
    const { signal, asker } = options;
    if (signal?.aborted) return Promise.resolve('withdrawn');
    const noUi = !this.hasAnswerer() && this.#graceTimer === undefined;
    if (this.#disposed || (noUi && !asker)) return Promise.resolve('cancelled');
    const timeout = this.timeoutMs();
    const id = this.#newId();
    // Frozen: every UI gets the same object, and none may change what another one shows.
    const prompt: PendingPrompt = Object.freeze({
      ...request,
      resolvedPaths: Object.freeze([...request.resolvedPaths]) as string[],
      id,
      expiresAt: this.#clock.now() + timeout,
    });
    return new Promise<PromptResolution>((resolve) => {
      const entry: Entry = { prompt, timer: undefined, resolve };
      this.#entries.set(id, entry);
      entry.timer = this.#clock.setTimeout(() => this.#settle(id, 'timeout'), timeout);
      const ends: (() => void)[] = [];
      if (signal) {
        const withdrawn = (): void => void this.#settle(id, 'withdrawn');
        signal.addEventListener('abort', withdrawn, { once: true });
        ends.push(() => signal.removeEventListener('abort', withdrawn));
      }
      if (asker && !this.hasAnswerer()) {
        entry.askerAnswers = true;
        const asking = new AbortController();
        ends.push(() => asking.abort());
        // Asked after the prompt is listed: a window opened meanwhile may answer it first.
        queueMicrotask(() => {
          if (!this.#entries.has(id)) return;
          asker.ask(prompt, asking.signal).then(
            // Checked, not trusted, and narrowed to this one call (see askerResolution).
            (answer) => this.#settle(id, askerResolution(answer)),
            () => this.#settle(id, 'cancelled'),
          );
        });
      }
      if (ends.length) entry.end = () => ends.forEach((end) => end());
      // Emitted last: a listener that answers synchronously finds everything in place.
      this.#events.emit('prompt', prompt);
    });
  }

  /** The user's answer. False for an unknown or already-ended prompt (a late second answer is ignored). */
  answer(id: string, answer: PromptAnswer): boolean {
    // The value may come over IPC: anything but a known answer is ignored, and the prompt times out.
    if (!(PROMPT_ANSWERS as readonly unknown[]).includes(answer)) return false;
    return this.#settle(id, answer);
  }

  /** Pending prompts in arrival order. */
  pending(): PendingPrompt[] {
    return [...this.#entries.values()].map((entry) => entry.prompt);
  }

  /** Cancel the prompts matching `predicate` (no one can answer them). Returns how many. */
  cancelWhere(predicate: (prompt: PendingPrompt) => boolean): number {
    return this.#endWhere(predicate, 'cancelled');
  }

  /** Withdraw the prompts matching `predicate`: their server stopped waiting (a dropped link). */
  withdrawWhere(predicate: (prompt: PendingPrompt) => boolean): number {
    return this.#endWhere(predicate, 'withdrawn');
  }

  #endWhere(
    predicate: (prompt: PendingPrompt) => boolean,
    resolution: 'cancelled' | 'withdrawn',
  ): number {
    const ids = [...this.#entries.values()]
      .filter((entry) => predicate(entry.prompt))
      .map((entry) => entry.prompt.id);
    for (const id of ids) this.#settle(id, resolution);
    return ids.length;
  }

  /** Cancel everything and clear every timer; later asks resolve 'cancelled'. */
  dispose(): void {
    this.#disposed = true;
    this.#clock.clearTimeout(this.#graceTimer);
    this.#graceTimer = undefined;
    this.cancelWhere(() => true);
  }

  #startGrace(): void {
    this.#clock.clearTimeout(this.#graceTimer);
    if (this.#graceMs === 0) {
      this.#graceTimer = undefined;
      this.#cancelUnanswerable();
      return;
    }
    this.#graceTimer = this.#clock.setTimeout(() => {
      this.#graceTimer = undefined;
      if (this.#answerers.size === 0) this.#cancelUnanswerable();
    }, this.#graceMs);
  }

  /** The last UI is gone: end the prompts nobody else is answering. */
  #cancelUnanswerable(): void {
    const ids = [...this.#entries.values()]
      .filter((entry) => !entry.askerAnswers)
      .map((entry) => entry.prompt.id);
    for (const id of ids) this.#settle(id, 'cancelled');
  }

  #settle(id: string, resolution: PromptResolution): boolean {
    const entry = this.#entries.get(id);
    if (!entry) return false;
    this.#entries.delete(id);
    this.#clock.clearTimeout(entry.timer);
    entry.end?.();
    entry.resolve(resolution);
    this.#events.emit('promptResolved', { id, resolution });
    return true;
  }

  #newId(): string {
    let id: string;
    do id = this.#ids.hex(16);
    while (this.#entries.has(id));
    return id;
  }
}
