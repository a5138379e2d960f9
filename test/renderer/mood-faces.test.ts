import { describe, expect, it } from 'vitest';
import { EMOTION_EMOJI } from '../../app/wire/xiaozhi/messages.js';
import { FACES, MoodFaceIcon } from '../../renderer/components/MoodFaces.js';
import { MOOD_KEYS, moodKey } from '../../renderer/features/chat/mood.js';
import { renderHtml } from './render.js';

const EMOJI = /\p{Extended_Pictographic}/u;

describe('mood faces', () => {
  it('every mood is drawn as the app’s own SVG, with no emoji character (no emoji font needed)', () => {
    for (const mood of MOOD_KEYS) {
      const html = renderHtml(MoodFaceIcon, { mood });
      expect(html, mood).toMatch(/^<svg[^>]*aria-hidden="true"/);
      expect(html, mood).not.toMatch(EMOJI);
    }
  });

  it('no two moods share a face', () => {
    const drawn = MOOD_KEYS.map((m) => JSON.stringify(FACES[m]));
    expect(new Set(drawn).size).toBe(MOOD_KEYS.length);
  });

  it('reads every emotion XiaoZhi sends, by name and by its emoji, as that mood', () => {
    for (const [emotion, emoji] of Object.entries(EMOTION_EMOJI)) {
      expect(moodKey(emotion), emotion).toBe(emotion);
      expect(moodKey(emoji), `${emotion} ${emoji}`).toBe(emotion);
    }
  });

  it('takes aliases, variation selectors and case; anything else, even a prototype name, is neutral', () => {
    expect(moodKey('Smile')).toBe('happy');
    expect(moodKey('😠\uFE0F')).toBe('angry');
    expect(moodKey('constructor')).toBe('neutral');
    expect(moodKey('__proto__')).toBe('neutral');
    expect(moodKey('x'.repeat(10_000))).toBe('neutral');
  });
});
