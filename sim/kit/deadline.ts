/**
 * How long a simulated server waits for the result of a call it made (issue 14 item 1). The agent
 * may spend its whole prompt countdown asking the user, then run the service: a server that gave
 * up sooner would report "no answer" for a call the user allowed and the agent then ran. So the
 * simulators wait for the prompt timeout plus a margin for the run, and when they do give up,
 * they say so in the dialect's way (MCP `notifications/cancelled`), never silently.
 */
import { DEFAULT_PROMPT_TIMEOUT_SEC } from '../../app/settings/schema.js';

/** Room after the prompt for the service itself to run (most finish within 10–15 s). */
export const CALL_WAIT_MARGIN_MS = 30_000;

/** The wait when the agent's prompt timeout is not known: its default countdown plus the margin. */
export const DEFAULT_CALL_WAIT_MS = DEFAULT_PROMPT_TIMEOUT_SEC * 1000 + CALL_WAIT_MARGIN_MS;

/** A fixed wait, or one read at each call (a demo follows the agent's setting as it changes). */
export type CallWait = number | (() => number);

export function callWaitMs(wait: CallWait): number {
  return typeof wait === 'function' ? wait() : wait;
}

/** The wait that covers a prompt of `promptTimeoutMs` (read at each call) and the run after it. */
export function coveringPrompt(promptTimeoutMs: () => number): () => number {
  return () => Math.max(0, promptTimeoutMs()) + CALL_WAIT_MARGIN_MS;
}
