/** How the Advent demo asks the agent to run a service, and what it says when that did not work. */
import {
  type Action,
  type DemoLanguage,
  noAnswerLine,
  notOfferedLine,
  refusalLine,
  refusalOf,
} from '../kit/demo-words.js';
import type { SimPeer } from './peer.js';

/**
 * The call's data, or the line to say instead: the service is not offered, the agent refused or
 * the service failed (paraphrased from the agent's message for the model), or no answer came.
 */
export async function ask(
  peer: SimPeer,
  method: string,
  params: Record<string, unknown>,
  action: Action,
  lang: DemoLanguage,
): Promise<{ data?: unknown } | string> {
  if (peer.services === undefined || !Object.hasOwn(peer.services, method))
    return notOfferedLine(action, lang);
  let result: { success: boolean; data?: unknown; error?: string };
  try {
    result = await peer.call(method, params);
  } catch {
    // Timed out, or the connection went: the technical reason is for logs, not for the user.
    return noAnswerLine(lang);
  }
  return result.success
    ? { data: result.data }
    : refusalLine(refusalOf(result.error), action, lang);
}
