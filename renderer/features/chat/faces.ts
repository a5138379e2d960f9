/**
 * What each mood's face is made of (drawn by components/MoodFaces.tsx): a few shared parts on a
 * 48×48 grid, so every mood the dialects send has its own face without an emoji font.
 */
import type { MoodKey } from './mood.js';

export type Eyes =
  'dot' | 'happy' | 'closed' | 'wide' | 'wink' | 'heart' | 'glasses' | 'squint' | 'up';
export type Brows = 'none' | 'sad' | 'angry' | 'raised' | 'one';
export type Mouth =
  | 'smile'
  | 'grin'
  | 'flat'
  | 'frown'
  | 'open'
  | 'gasp'
  | 'smirk'
  | 'tongue'
  | 'kiss'
  | 'wavy'
  | 'small';
export type Extra = 'blush' | 'tear' | 'zzz' | 'sweat' | 'heart';

export interface Face {
  eyes: Eyes;
  brows?: Brows;
  mouth: Mouth;
  extras?: Extra[];
}

export const FACES: Record<MoodKey, Face> = {
  neutral: { eyes: 'dot', mouth: 'flat' },
  happy: { eyes: 'dot', mouth: 'smile' },
  laughing: { eyes: 'squint', mouth: 'grin' },
  funny: { eyes: 'happy', mouth: 'grin', extras: ['tear'] },
  sad: { eyes: 'dot', brows: 'sad', mouth: 'frown' },
  angry: { eyes: 'dot', brows: 'angry', mouth: 'frown' },
  crying: { eyes: 'closed', brows: 'sad', mouth: 'open', extras: ['tear'] },
  loving: { eyes: 'heart', mouth: 'smile' },
  surprised: { eyes: 'wide', brows: 'raised', mouth: 'open' },
  shocked: { eyes: 'wide', brows: 'raised', mouth: 'gasp', extras: ['sweat'] },
  thinking: { eyes: 'up', brows: 'one', mouth: 'small' },
  embarrassed: { eyes: 'dot', mouth: 'wavy', extras: ['blush'] },
  cool: { eyes: 'glasses', mouth: 'smirk' },
  sleepy: { eyes: 'closed', mouth: 'small', extras: ['zzz'] },
  winking: { eyes: 'wink', mouth: 'smile' },
  confused: { eyes: 'dot', brows: 'one', mouth: 'wavy' },
  relaxed: { eyes: 'happy', mouth: 'smile', extras: ['blush'] },
  confident: { eyes: 'dot', brows: 'raised', mouth: 'smirk' },
  delicious: { eyes: 'happy', mouth: 'tongue' },
  kissy: { eyes: 'wink', mouth: 'kiss', extras: ['heart'] },
  silly: { eyes: 'wink', mouth: 'tongue' },
};
