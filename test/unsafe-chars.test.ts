import { describe, expect, it } from 'vitest';
import { clipped, escapedUnsafe, oneLine, shortLine } from '../app/unsafe-chars.js';

describe('text from someone else, shown to a person', () => {
  it('makes one line: breaks become spaces, reordering and invisible characters go', () => {
    expect(oneLine(' Read\nfile\u202Etxt.exe\u200B  now\u{E0041} ')).toBe('Read filetxt.exe now');
  });

  it('cuts to at most the length asked, the last character an ellipsis', () => {
    expect(clipped('abcdef', 6)).toBe('abcdef');
    expect(clipped('abcdefg', 6)).toBe('abcde…');
    expect(shortLine('a\nb'.repeat(50), 10)).toHaveLength(10);
  });

  it('writes out what it cannot show, so nothing is dropped or reordered silently', () => {
    expect(escapedUnsafe('rm\u202E -rf\u0007 \u{E0041}')).toBe('rm\\u202E -rf\\u0007 \\u{E0041}');
    expect(escapedUnsafe('plain text, “quoted”')).toBe('plain text, “quoted”');
  });
});
