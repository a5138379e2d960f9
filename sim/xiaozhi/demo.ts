/**
 * The canned conversation of the XiaoZhi demo server: enough to see a typed or spoken turn, an
 * MCP call through the user's permission gate, a subtitle, a mood and a voice — no account, no AI.
 */
import type { XzSimConnection } from './conn.js';
import type { XzTurn } from './records.js';
import { PCM_BYTES_PER_MS, speechLike } from '../kit/tone.js';

export type XzTurnHandler = (turn: XzTurn, conn: XzSimConnection) => void | Promise<void>;

const TIME = /\btime\b|几点/i;
const TIME_TOOL = 'get_current_time';

export function createXiaozhiDemo(): XzTurnHandler {
  return async (turn, conn) => {
    // The server tells the device what it heard: typed text as is, a voice turn as a marker
    // (the simulator has no speech recogniser).
    conn.stt(turn.voice ? '(voice)' : turn.text);
    let answer: string;
    let emotion = 'happy';
    if (!turn.voice && TIME.test(turn.text)) {
      ({ answer, emotion } = await tellTime(conn));
    } else if (turn.voice) {
      answer = `I heard ${Math.round(turn.pcm.length / PCM_BYTES_PER_MS)} ms of audio.`;
    } else {
      answer = `You said: ${turn.text}. Try "what time is it".`;
    }
    if (conn.closed) return;
    conn.say(answer, { emotion, pcm: speechLike(4, 0.12, conn.downlinkRate) });
  };
}

async function tellTime(conn: XzSimConnection): Promise<{ answer: string; emotion: string }> {
  if (!conn.tools?.some((t) => t.name === TIME_TOOL))
    return {
      answer: `I can't tell the time: your agent has not listed the ${TIME_TOOL} tool.`,
      emotion: 'sad',
    };
  try {
    const result = await conn.callTool(TIME_TOOL, {});
    if (result.isError)
      return { answer: `I couldn't get the time: ${result.text}`, emotion: 'sad' };
    return { answer: `It's ${result.text}.`, emotion: 'happy' };
  } catch (err) {
    return {
      answer: `I asked your agent for the time but got no answer (${(err as Error).message}).`,
      emotion: 'sad',
    };
  }
}
