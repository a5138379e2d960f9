/**
 * The robot demo's canned conversation: enough to see a registered tool run (with the user's
 * permission for a write), a thought, a streamed reply and a spoken answer, with no AI behind it.
 */
import { NOTE, noteBody, noteFilename, show } from '../kit/demo-common.js';
import {
  ACTIONS,
  type Action,
  type DemoLanguage,
  demoLanguage,
  noAnswerLine,
  notOfferedLine,
  refusalLine,
  refusalOf,
} from '../kit/demo-words.js';
import type { RobotConn, RobotStream } from './conn.js';
import { PCM_BYTES_PER_MS, speechLike } from '../kit/tone.js';

const TIME = /what time|time is it|几点|时间/i;
const TIME_TOOL = 'get_current_time';
const FILE_TOOL = 'create_file';

export interface RobotDemoOptions {
  /** For note file names. */
  now?: () => number;
  /** The app language, read at each turn, for what the demo says when a call did not work. */
  language?: () => string;
}

export function createRobotDemo(options: RobotDemoOptions = {}): {
  text: (text: string, conn: RobotConn) => Promise<void>;
  voice: (stream: RobotStream, conn: RobotConn) => Promise<void>;
} {
  const now = options.now ?? Date.now;
  return {
    text: async (text, conn) => {
      const t = text.trim();
      const lang = demoLanguage(options.language?.());
      if (TIME.test(t)) return tellTime(conn, lang);
      if (NOTE.test(t)) return writeNote(conn, t, now(), lang);
      say(conn, `You said: ${t}. Try "what time is it" or "write a note: buy milk".`);
    },
    voice: async (stream, conn) => {
      const ms = Math.round(stream.pcm.length / PCM_BYTES_PER_MS);
      say(conn, `I heard ${ms} ms of audio.`);
    },
  };
}

async function tellTime(conn: RobotConn, lang: DemoLanguage): Promise<void> {
  if (!conn.toolNames.includes(TIME_TOOL)) return say(conn, notOfferedLine(ACTIONS.time, lang));
  conn.aiMessage('thought', `The user wants the time; asking the device (${TIME_TOOL}).`);
  const outcome = await ask(conn, TIME_TOOL, { format: 'simple' }, ACTIONS.time, lang);
  if (typeof outcome === 'string') return say(conn, outcome);
  say(conn, `It's ${show(outcome.result)}.`);
}

async function writeNote(
  conn: RobotConn,
  text: string,
  at: number,
  lang: DemoLanguage,
): Promise<void> {
  if (!conn.toolNames.includes(FILE_TOOL)) return say(conn, notOfferedLine(ACTIONS.note, lang));
  const body = noteBody(text);
  const filename = noteFilename(at);
  conn.aiMessage('thought', `Saving the note with ${FILE_TOOL} as ${filename}.`);
  const outcome = await ask(conn, FILE_TOOL, { filename, content: body }, ACTIONS.note, lang);
  if (typeof outcome === 'string') return say(conn, outcome);
  const message = (outcome.result as { message?: unknown } | null)?.message;
  say(conn, typeof message === 'string' ? `Done. ${message}.` : `Saved it as ${filename}.`);
}

/**
 * The response's result, or the line to say instead: a refusal paraphrased from the agent's
 * message for the model, or no answer at all (timed out and cancelled, or the connection went).
 */
async function ask(
  conn: RobotConn,
  tool: string,
  input: unknown,
  action: Action,
  lang: DemoLanguage,
): Promise<{ result?: unknown } | string> {
  try {
    const outcome = await conn.execute(tool, input);
    if (outcome.error) return refusalLine(refusalOf(outcome.error.message), action, lang);
    return { result: outcome.result };
  } catch {
    return noAnswerLine(lang);
  }
}

/** A streamed text reply, then its voice; nothing once the connection is gone. */
function say(conn: RobotConn, text: string): void {
  if (conn.closed) return;
  conn.reply(text);
  conn.sendAudio(speechLike(3));
}
