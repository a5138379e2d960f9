/**
 * The canned conversation of the XiaoZhi demo server: enough to see a typed or spoken turn, an
 * MCP call through the user's permission gate, a subtitle, a mood and a voice — no account, no AI.
 */
import {
  ACTIONS,
  type DemoLanguage,
  demoLanguage,
  noAnswerLine,
  notOfferedLine,
  refusalLine,
  refusalOf,
} from '../kit/demo-words.js';
import type { XzSimConnection } from './conn.js';
import type { XzTurn } from './records.js';
import { PCM_BYTES_PER_MS, speechLike } from '../kit/tone.js';

export type XzTurnHandler = (turn: XzTurn, conn: XzSimConnection) => void | Promise<void>;

const TIME = /\btime\b|几点/i;
const TIME_TOOL = 'get_current_time';

export interface XiaozhiDemoOptions {
  /** The app language, read at each turn, for what the demo says when a call did not work. */
  language?: () => string;
}

export function createXiaozhiDemo(options: XiaozhiDemoOptions = {}): XzTurnHandler {
  return async (turn, conn) => {
    const lang = demoLanguage(options.language?.());
    // The server tells the device what it heard: typed text as is, a voice turn as a marker
    // (the simulator has no speech recogniser).
    conn.stt(turn.voice ? '(voice)' : turn.text);
    let answer: string;
    let emotion = 'happy';
    if (!turn.voice && TIME.test(turn.text)) {
      ({ answer, emotion } = await tellTime(conn, lang));
    } else if (turn.voice) {
      answer = `I heard ${Math.round(turn.pcm.length / PCM_BYTES_PER_MS)} ms of audio.`;
    } else {
      answer = `You said: ${turn.text}. Try "what time is it".`;
    }
    if (conn.closed) return;
    conn.say(answer, { emotion, pcm: speechLike(4, 0.12, conn.downlinkRate) });
  };
}

async function tellTime(
  conn: XzSimConnection,
  lang: DemoLanguage,
): Promise<{ answer: string; emotion: string }> {
  if (!conn.tools?.some((t) => t.name === TIME_TOOL))
    return { answer: notOfferedLine(ACTIONS.time, lang), emotion: 'sad' };
  try {
    const result = await conn.callTool(TIME_TOOL, {});
    // The agent's text is written for the AI model: say what it means instead.
    if (result.isError)
      return { answer: refusalLine(refusalOf(result.text), ACTIONS.time, lang), emotion: 'sad' };
    return { answer: `It's ${result.text}.`, emotion: 'happy' };
  } catch {
    // Timed out (and cancelled), or the connection went: the details are for logs.
    return { answer: noAnswerLine(lang), emotion: 'sad' };
  }
}
