import { describe, expect, it } from 'vitest';
import { decodeText, encodingName } from '../../../app/services/files/text.js';

const utf16 = (text: string, order: 'le' | 'be'): Buffer => {
  const le = Buffer.from(text, 'utf16le');
  const body = order === 'le' ? le : Buffer.from(le).swap16();
  return Buffer.concat([Buffer.from(order === 'le' ? [0xff, 0xfe] : [0xfe, 0xff]), body]);
};

describe('decodeText', () => {
  it.each<[string, Buffer, string, string]>([
    ['UTF-8', Buffer.from('héllo 世界'), 'héllo 世界', 'UTF-8'],
    ['UTF-8 with a BOM', Buffer.from('\ufeffhéllo'), 'héllo', 'UTF-8 with BOM'],
    ['UTF-16 LE by its BOM', utf16('héllo 世界 😀', 'le'), 'héllo 世界 😀', 'UTF-16 LE'],
    ['UTF-16 BE by its BOM', utf16('héllo 世界 😀', 'be'), 'héllo 世界 😀', 'UTF-16 BE'],
    ['an empty file', Buffer.alloc(0), '', 'UTF-8'],
    ['tabs, newlines and a form feed', Buffer.from('a\tb\r\nc\fd'), 'a\tb\r\nc\fd', 'UTF-8'],
  ])('reads %s', (_label, bytes, text, encoding) => {
    const decoded = decodeText(bytes, true);
    expect(decoded.ok && [decoded.text, encodingName(decoded.encoding)]).toEqual([text, encoding]);
  });

  it.each<[string, Buffer, RegExp]>([
    ['a PNG image', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a]), /is a PNG image/],
    ['a PDF', Buffer.from('%PDF-1.7\n'), /is a PDF document/],
    ['NUL bytes', Buffer.from('abc\u0000def'), /NUL bytes/],
    ['Latin-1 text', Buffer.from([0x63, 0x61, 0x66, 0xe9]), /not UTF-8 or UTF-16 text/],
    ['GBK text', Buffer.from([0xc4, 0xe3, 0xba, 0xc3]), /another encoding such as GBK/],
    ['mostly control characters', Buffer.from('\u0001\u0002\u0003abc'), /control characters/],
    ['UTF-16 cut to an odd length', utf16('ab', 'le').subarray(0, 5), /odd length/],
    [
      'UTF-16 holding a lone surrogate',
      Buffer.from([0xff, 0xfe, 0x00, 0xd8]),
      /not valid UTF-16LE/,
    ],
  ])('refuses %s with a reason', (_label, bytes, reason) => {
    const decoded = decodeText(bytes, true);
    expect(decoded.ok).toBe(false);
    expect(!decoded.ok && decoded.reason).toMatch(reason);
  });

  it('does not hold a character cut by the end of a sniffed start against the file', () => {
    const start = Buffer.from('ab世').subarray(0, 4); // '世' is 3 bytes: cut after its first
    expect(decodeText(start, false)).toEqual({ ok: true, text: 'ab', encoding: 'utf-8' });
    expect(decodeText(start, true).ok).toBe(false);
    const wide = utf16('abc', 'be').subarray(0, 5);
    expect(decodeText(wide, false)).toEqual({ ok: true, text: 'a', encoding: 'utf-16be' });
  });
});
