import { randomBytes } from 'node:crypto';

/** Source of random identifiers; injected so tests can make ids predictable. */
export interface IdSource {
  /** `n` lowercase hex characters. */
  hex(n: number): string;
  /** A float in [0, 1) — for jitter. */
  random(): number;
}

export const cryptoIds: IdSource = {
  hex: (n) =>
    randomBytes(Math.ceil(n / 2))
      .toString('hex')
      .slice(0, n),
  random: () => randomBytes(4).readUInt32BE(0) / 0x1_0000_0000,
};

/** A deterministic source for tests: a small xorshift PRNG. */
export function seededIds(seed = 1): IdSource {
  let s = seed >>> 0 || 1;
  const next = (): number => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x1_0000_0000;
  };
  return {
    hex: (n) => {
      let out = '';
      while (out.length < n) out += Math.floor(next() * 16).toString(16);
      return out;
    },
    random: next,
  };
}
