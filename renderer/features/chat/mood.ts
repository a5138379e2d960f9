/**
 * The character's mood: whatever the server sends (Advent emoji mode keys, XiaoZhi emotion names,
 * or the emoji itself, as XiaoZhi's `llm` message and EMOTION_EMOJI in
 * app/wire/xiaozhi/messages.ts carry them) read as one of the faces the app draws
 * (components/MoodFaces.tsx). Unknown input shows the neutral face rather than the raw text.
 */
export const MOOD_KEYS = [
  'neutral',
  'happy',
  'laughing',
  'funny',
  'sad',
  'angry',
  'crying',
  'loving',
  'surprised',
  'shocked',
  'thinking',
  'embarrassed',
  'cool',
  'sleepy',
  'winking',
  'confused',
  'relaxed',
  'confident',
  'delicious',
  'kissy',
  'silly',
] as const;

export type MoodKey = (typeof MOOD_KEYS)[number];

const ALIASES: Record<string, MoodKey> = {
  smile: 'happy',
  smiling: 'happy',
  joy: 'happy',
  glad: 'happy',
  laugh: 'laughing',
  lol: 'laughing',
  love: 'loving',
  heart: 'loving',
  cry: 'crying',
  tears: 'crying',
  surprise: 'surprised',
  shock: 'shocked',
  think: 'thinking',
  embarrass: 'embarrassed',
  blush: 'embarrassed',
  anger: 'angry',
  mad: 'angry',
  sleep: 'sleepy',
  wink: 'winking',
  calm: 'relaxed',
  default: 'neutral',
  normal: 'neutral',
};

/**
 * Emoji a server may send instead of a name: XiaoZhi's EMOTION_EMOJI set first (it decides what
 * 🙂 means: happy), then the faces other servers commonly use for the same moods.
 */
const EMOJI: Record<string, MoodKey> = {
  '😶': 'neutral',
  '🙂': 'happy',
  '😆': 'laughing',
  '😂': 'funny',
  '😔': 'sad',
  '😠': 'angry',
  '😭': 'crying',
  '😍': 'loving',
  '😳': 'embarrassed',
  '😯': 'surprised',
  '😱': 'shocked',
  '🤔': 'thinking',
  '😉': 'winking',
  '😎': 'cool',
  '😌': 'relaxed',
  '🤤': 'delicious',
  '😘': 'kissy',
  '😏': 'confident',
  '😴': 'sleepy',
  '😜': 'silly',
  '🙄': 'confused',
  '😐': 'neutral',
  '😊': 'happy',
  '😀': 'happy',
  '😁': 'laughing',
  '😄': 'funny',
  '🤣': 'funny',
  '😢': 'sad',
  '😞': 'sad',
  '😡': 'angry',
  '🥰': 'loving',
  '😮': 'surprised',
  '😲': 'shocked',
  '😕': 'confused',
  '😋': 'delicious',
  '😝': 'silly',
  '😪': 'sleepy',
};

const KEYS: ReadonlySet<string> = new Set(MOOD_KEYS);

/** The mood key for whatever the server sent ('Happy', 'laughing', '😊'…); unknown → neutral. */
export function moodKey(raw: string | undefined): MoodKey {
  if (!raw) return 'neutral';
  const text = raw.trim().slice(0, 64);
  const key = text.toLowerCase();
  if (KEYS.has(key)) return key as MoodKey;
  if (Object.hasOwn(ALIASES, key)) return ALIASES[key] as MoodKey;
  // An emoji, possibly with a variation selector (U+FE0F) after it.
  const emoji = text.replace(/\uFE0F/g, '');
  return Object.hasOwn(EMOJI, emoji) ? (EMOJI[emoji] as MoodKey) : 'neutral';
}
