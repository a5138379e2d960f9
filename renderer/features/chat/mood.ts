/**
 * The character's face: the server's emoji keys (Advent emoji mode, XiaoZhi emotions) mapped to
 * an emoji. Unknown keys show the neutral face rather than the raw key.
 */
export const MOODS = {
  neutral: '🙂',
  happy: '😊',
  laughing: '😆',
  funny: '😄',
  sad: '😢',
  angry: '😠',
  crying: '😭',
  loving: '😍',
  surprised: '😮',
  shocked: '😱',
  thinking: '🤔',
  embarrassed: '😳',
  cool: '😎',
  sleepy: '😴',
  winking: '😉',
  confused: '😕',
  relaxed: '😌',
  confident: '😏',
  delicious: '😋',
  kissy: '😘',
  silly: '😜',
} as const;

export type MoodKey = keyof typeof MOODS;

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

/** The mood key for whatever the server sent ('Happy', 'laughing', '😊'…); unknown → neutral. */
export function moodKey(raw: string | undefined): MoodKey {
  if (!raw) return 'neutral';
  const key = raw.trim().toLowerCase();
  if (Object.hasOwn(MOODS, key)) return key as MoodKey;
  const alias = ALIASES[key];
  if (alias) return alias;
  // The server may send the emoji itself.
  for (const [name, emoji] of Object.entries(MOODS))
    if (emoji === raw.trim()) return name as MoodKey;
  return 'neutral';
}

export function moodEmoji(raw: string | undefined): string {
  return MOODS[moodKey(raw)];
}
