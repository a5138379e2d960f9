import { describe, expect, it } from 'vitest';
import { formatBytes } from '../../app/services/size.js';

describe('formatBytes', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1.0 KB'],
    [1234, '1.2 KB'],
    [1024 * 1024 - 1, '1.0 MB'],
    [10 * 1024 * 1024, '10.0 MB'],
    [3 * 1024 ** 3, '3.0 GB'],
  ])('%d bytes reads as %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });
});
