/**
 * Permission with no window (issue 12): when nobody has the app open, the MCP client that made
 * the call asks its own user through `elicitation/create`, if it declared it can. It answers the
 * broker's prompt like any UI would (permissions/broker.ts Asker), so the prompt keeps its
 * timeout — no answer in time is a no — and a window opened meanwhile may answer it first.
 * Only "once" and "deny" are offered: the answer comes from the client's own UI, which the agent
 * cannot tell from the client itself, so it may allow the call asked about and nothing more (the
 * broker turns any "session" into "once" too). Only the app's own prompt remembers a grant.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '../clock.js';
import type { Asker, AskerAnswer } from '../permissions/broker.js';
import { ELICIT_ANSWERS, elicitMessage, elicitSchema } from './words.js';

export interface ElicitDeps {
  server: Server;
  clock: Clock;
  language: () => string;
  /** The service's title for people (the prompt carries only its name). */
  titleOf: (service: string) => string;
  /**
   * The client's request (the tool call) the question is about. The question travels with it:
   * over HTTP on that request's own stream, which is open while the call waits, as the transport
   * spec asks of messages relating to a request (the session's GET stream may not be open yet,
   * or ever: a client need not open one).
   */
  relatedRequestId?: RequestId;
}

/** Whether the client said it can ask its user (form elicitation; `{}` means form). */
export function canElicit(server: Server): boolean {
  return Boolean(server.getClientCapabilities()?.elicitation?.form);
}

export function elicitationAsker({
  server,
  clock,
  language,
  titleOf,
  relatedRequestId,
}: ElicitDeps): Asker {
  return {
    async ask(prompt, signal): Promise<AskerAnswer | undefined> {
      const leftMs = Math.max(0, prompt.expiresAt - clock.now());
      const lang = language();
      const result = await server.elicitInput(
        {
          mode: 'form',
          message: elicitMessage(prompt, { title: titleOf(prompt.service) }, lang, leftMs / 1000),
          requestedSchema: elicitSchema(lang),
        },
        // The broker's timeout ends the prompt (and aborts this); the request's own timeout is
        // only a backstop past it.
        { signal, timeout: leftMs + 5_000, relatedRequestId },
      );
      // Declined or dismissed: a no, never a reason to ask again or to run.
      if (result.action !== 'accept') return 'deny';
      // An answer the form did not offer fails the SDK's check against it (no answer at all); the
      // broker narrows a "session" to "once" whatever asked.
      const answer = result.content?.answer;
      return (ELICIT_ANSWERS as readonly unknown[]).includes(answer)
        ? (answer as AskerAnswer)
        : 'deny';
    },
  };
}
