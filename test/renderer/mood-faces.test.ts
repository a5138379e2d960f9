import { describe, expect, it } from 'vitest';
import { EMOTION_EMOJI } from '../../app/wire/xiaozhi/messages.js';
import { FACES } from '../../renderer/features/chat/faces.js';
import { MOOD_KEYS, moodKey } from '../../renderer/features/chat/mood.js';

describe('mood faces', () => {
  it('every mood has a face of the app’s own, and no two moods share one', () => {
    for (const mood of MOOD_KEYS) expect(FACES[mood], mood).toBeDefined();
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
