import { describe, expect, it } from 'vitest';
import { nameGlob } from '../../../app/services/files/glob.js';

describe('nameGlob', () => {
  it.each<[string, string, boolean]>([
    ['*.txt', 'todo.txt', true],
    ['*.txt', 'todo.md', false],
    ['*.TXT', 'Todo.txt', true],
    ['note-2025*', 'note-20250122-143025.txt', true],
    ['note-2025*', 'my note-2025.txt', false],
    ['?.md', 'a.md', true],
    ['?.md', 'ab.md', false],
    ['*', '', true],
    ['*', '.hidden', true],
    ['a*b*c', 'aXXbYYc', true],
    ['a*b*c', 'aXXcYYb', false],
    ['日记*', '日记-今天.md', true],
    ['?', '😀', true],
    ['[ab].txt', '[ab].txt', true],
    ['[ab].txt', 'a.txt', false],
  ])('%s matches %j: %s', (pattern, name, expected) => {
    expect(nameGlob(pattern)(name)).toBe(expected);
  });

  it('answers a pattern built to make regular expressions backtrack', () => {
    const hostile = nameGlob(`${'*a'.repeat(100)}b`);
    expect(hostile('a'.repeat(255))).toBe(false);
    expect(hostile(`${'a'.repeat(254)}b`)).toBe(true);
  });
});
