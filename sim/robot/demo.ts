/**
 * The robot demo's canned conversation: enough to see a registered tool run (with the user's
 * permission for a write), a thought, a streamed reply and a spoken answer, with no AI behind it.
 */
import { NOTE, noteBody, noteFilename, show } from '../kit/demo-common.js';
import type { ExecuteOutcome, RobotConn, RobotStream } from './conn.js';
import { PCM_BYTES_PER_MS, speechLike } from '../kit/tone.js';

const TIME = /what time|time is it|几点|时间/i;
const TIME_TOOL = 'get_current_time';
const FILE_TOOL = 'create_file';

export interface RobotDemoOptions {
  /** For note file names. */
  now?: () => number;
}

export function createRobotDemo(options: RobotDemoOptions = {}): {
  text: (text: string, conn: RobotConn) => Promise<void>;
  voice: (stream: RobotStream, conn: RobotConn) => Promise<void>;
} {
  const now = options.now ?? Date.now;
  return {
    text: async (text, conn) => {
      const t = text.trim();
      if (TIME.test(t)) return tellTime(conn);
      if (NOTE.test(t)) return writeNote(conn, t, now());
      say(conn, `You said: ${t}. Try "what time is it" or "write a note: buy milk".`);
    },
    voice: async (stream, conn) => {
      const ms = Math.round(stream.pcm.length / PCM_BYTES_PER_MS);
      say(conn, `I heard ${ms} ms of audio.`);
    },
  };
}

async function tellTime(conn: RobotConn): Promise<void> {
  if (!conn.toolNames.includes(TIME_TOOL))
    return say(conn, `I can't tell the time: your device has not registered ${TIME_TOOL}.`);
  conn.aiMessage('thought', `The user wants the time; asking the device (${TIME_TOOL}).`);
  const outcome = await ask(conn, TIME_TOOL, { format: 'simple' });
  if (typeof outcome === 'string') return say(conn, outcome);
  if (outcome.error) return say(conn, `I couldn't get the time: ${outcome.error.message}`);
  say(conn, `It's ${show(outcome.result)}.`);
}

async function writeNote(conn: RobotConn, text: string, at: number): Promise<void> {
  if (!conn.toolNames.includes(FILE_TOOL))
    return say(conn, `I can't save notes: your device has not registered ${FILE_TOOL}.`);
  const body = noteBody(text);
  const filename = noteFilename(at);
  conn.aiMessage('thought', `Saving the note with ${FILE_TOOL} as ${filename}.`);
  const outcome = await ask(conn, FILE_TOOL, { filename, content: body });
  if (typeof outcome === 'string') return say(conn, outcome);
  if (outcome.error) return say(conn, `I couldn't save it: ${outcome.error.message}`);
  const message = (outcome.result as { message?: unknown } | null)?.message;
  say(conn, typeof message === 'string' ? `Done. ${message}.` : `Saved it as ${filename}.`);
}

/** The response, or a sentence saying why there is none (timeout, connection gone). */
async function ask(
  conn: RobotConn,
  tool: string,
  input: unknown,
): Promise<ExecuteOutcome | string> {
  try {
    return await conn.execute(tool, input);
  } catch (err) {
    return `I asked your device to run ${tool} but got no answer (${(err as Error).message}).`;
  }
}

/** A streamed text reply, then its voice; nothing once the connection is gone. */
function say(conn: RobotConn, text: string): void {
  if (conn.closed) return;
  conn.reply(text);
  conn.sendAudio(speechLike(3));
}
