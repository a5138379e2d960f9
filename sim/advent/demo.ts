import { NOTE, noteBody, noteFilename, show } from '../kit/demo-common.js';
import { ACTIONS, type DemoLanguage, demoLanguage } from '../kit/demo-words.js';
import { ask } from './demo-ask.js';
import { desktopTurn } from './demo-desktop.js';
import type { SimPeer } from './peer.js';
import type { Turn, TurnHandler } from './records.js';
import { PCM_BYTES_PER_MS, sineTone, speechLike } from '../kit/tone.js';

/**
 * The canned conversation of the demo server: enough to see a turn, an MCP call with the user's
 * permission, a streamed reply, a voice and a mood, with no account and no AI behind it.
 */

const TIME = /what time|几点|time is it/i;
const TIME_SERVICE = 'get_current_time';
const FILE_SERVICE = 'create_file';
const LIST_NOTES = /\b(?:list|show)\s+(?:my\s+|the\s+)?notes\b/i;
const READ_NOTE = /\bread\s+(?:my\s+|the\s+)?note\s*:?\s+(.+)$/i;
const LIST_SERVICE = 'list_directory';
const READ_SERVICE = 'read_file';
/** How many names and characters of a note a spoken reply can bear. */
const SHOWN_NOTES = 10;
const SHOWN_CHARS = 300;

export interface DemoOptions {
  /** For note file names. */
  now?: () => number;
  /** The app language, read at each turn, for what the demo says when a call did not work. */
  language?: () => string;
}

export function createDemo(options: DemoOptions = {}): TurnHandler {
  const now = options.now ?? Date.now;
  return async (turn, peer) => {
    const lang = demoLanguage(options.language?.());
    const text = turn.text.trim();
    if (text === '') return reply(peer, turn.taskId, heard(turn), 'happy', speechLike());
    if (TIME.test(text)) return tellTime(turn, peer, lang);
    if (LIST_NOTES.test(text)) return listNotes(turn, peer, lang);
    const read = READ_NOTE.exec(text);
    if (read) return readNote(turn, peer, read[1]!.trim(), lang);
    if (NOTE.test(text)) return writeNote(turn, peer, text, now(), lang);
    const desktop = await desktopTurn(text, peer, lang);
    if (desktop) return reply(peer, turn.taskId, desktop.text, desktop.emoji);
    return reply(
      peer,
      turn.taskId,
      `You said: ${text}. Try "what time is it" or "write a note: buy milk".`,
    );
  };
}

/** `turn.audio` is PCM whatever the upload format (the session decodes Opus). */
function heard(turn: Turn): string {
  return `I heard ${Math.round(turn.audio.length / PCM_BYTES_PER_MS)} ms of audio.`;
}

async function tellTime(turn: Turn, peer: SimPeer, lang: DemoLanguage): Promise<void> {
  const result = await ask(peer, TIME_SERVICE, { format: 'simple' }, ACTIONS.time, lang);
  if (typeof result === 'string') return reply(peer, turn.taskId, result, 'sad');
  return reply(peer, turn.taskId, `It's ${show(result.data)}.`);
}

async function writeNote(
  turn: Turn,
  peer: SimPeer,
  text: string,
  at: number,
  lang: DemoLanguage,
): Promise<void> {
  const filename = noteFilename(at);
  const params = { filename, content: noteBody(text) };
  const result = await ask(peer, FILE_SERVICE, params, ACTIONS.note, lang);
  if (typeof result === 'string') return reply(peer, turn.taskId, result, 'sad');
  const where = typeof result.data === 'string' && result.data.trim() ? result.data : filename;
  return reply(peer, turn.taskId, `Saved it as ${where}.`);
}

async function listNotes(turn: Turn, peer: SimPeer, lang: DemoLanguage): Promise<void> {
  const result = await ask(peer, LIST_SERVICE, { path: 'notes' }, ACTIONS.listNotes, lang);
  if (typeof result === 'string') return reply(peer, turn.taskId, result, 'sad');
  const data = result.data as { total?: unknown; entries?: { name?: unknown }[] } | null;
  const names = (Array.isArray(data?.entries) ? data.entries : [])
    .map((e) => e?.name)
    .filter((n): n is string => typeof n === 'string');
  const total = typeof data?.total === 'number' ? data.total : names.length;
  if (total === 0) {
    return reply(peer, turn.taskId, 'You have no notes yet. Try "write a note: buy milk".');
  }
  const shown = names.slice(0, SHOWN_NOTES).join(', ');
  const more = total > SHOWN_NOTES ? ` and ${total - SHOWN_NOTES} more` : '';
  return reply(
    peer,
    turn.taskId,
    `You have ${total} ${total === 1 ? 'note' : 'notes'}: ${shown}${more}.`,
  );
}

/** `read note shopping` reads notes/shopping.txt; a name with an extension is taken as is. */
async function readNote(
  turn: Turn,
  peer: SimPeer,
  name: string,
  lang: DemoLanguage,
): Promise<void> {
  const file = name.includes('.') ? name : `${name}.txt`;
  const result = await ask(peer, READ_SERVICE, { path: `notes/${file}` }, ACTIONS.readNote, lang);
  if (typeof result === 'string') return reply(peer, turn.taskId, result, 'sad');
  const data = result.data as { content?: unknown } | null;
  const content = typeof data?.content === 'string' ? data.content.trim() : show(result.data);
  const cut =
    Array.from(content).length > SHOWN_CHARS
      ? `${Array.from(content).slice(0, SHOWN_CHARS).join('')}…`
      : content;
  return reply(peer, turn.taskId, cut === '' ? `${file} is empty.` : `${file} says: ${cut}`);
}

/**
 * A reply as the real server streams one: the text in a few pieces, the mood, a short voice (in
 * the format AUTH asked for), then END_FRAME, all on the turn's task. Nothing is sent once the
 * connection is gone.
 */
export async function reply(
  peer: SimPeer,
  taskId: string,
  text: string,
  emoji = 'happy',
  voice: Buffer = sineTone(300, 440, 0.1),
): Promise<void> {
  if (peer.closed) return;
  // A TEXT payload cannot carry the frame end marker; the user may well have typed it.
  const safe = text.replaceAll('##', '#\u200b#');
  await Promise.all([
    peer.text(taskId, pieces(safe)),
    peer.emoji(taskId, emoji),
    peer.speech(taskId, voice),
    peer.end(taskId),
  ]);
}

/** Two or three pieces cut at spaces where possible, never inside a character. */
export function pieces(text: string): string[] {
  const chars = Array.from(text);
  const n = chars.length < 2 ? 1 : chars.length < 24 ? 2 : 3;
  const out: string[] = [];
  let from = 0;
  for (let i = 1; i <= n; i++) {
    let to = i === n ? chars.length : Math.round((chars.length * i) / n);
    if (i < n) {
      const space = chars.indexOf(' ', to);
      if (space > 0 && space - to < 8 && space + 1 < chars.length) to = space + 1;
    }
    if (to > from) out.push(chars.slice(from, to).join(''));
    from = to;
  }
  return out;
}
