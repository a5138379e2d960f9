import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../app/wire/kit/backoff.js';

const timing = { backoffInitialMs: 1000, backoffMaxMs: 60_000, backoffFactor: 2, jitter: 0.25 };

describe('reconnect backoff', () => {
  it('doubles from the first delay while the jitter sits in the middle', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, timing, 0.5))).toEqual([1000, 2000, 4000, 8000]);
  });

  it('spreads each delay by at most ± the jitter fraction', () => {
    expect(backoffDelay(3, timing, 0)).toBe(3000);
    expect(backoffDelay(3, timing, 0.999_999)).toBe(5000);
  });

  it('never waits longer than the cap, jitter included', () => {
    for (const random of [0, 0.5, 0.999_999])
      expect(backoffDelay(20, timing, random)).toBeLessThanOrEqual(60_000);
    expect(backoffDelay(20, timing, 0)).toBe(45_000);
  });
});
