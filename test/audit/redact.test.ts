import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MASK,
  MAX_DEPTH,
  MAX_ITEMS,
  MAX_NODES,
  MAX_STRING,
  canonicalJson,
  cutString,
  maskSecretsIn,
  redactParams,
  secretValues,
  sha256Hex,
} from '../../app/audit/redact.js';

describe('redactParams', () => {
  it('cuts strings longer than 200 chars and says how much was cut', () => {
    const out = redactParams({ content: 'x'.repeat(5000) }) as { content: string };
    expect(out.content).toBe(`${'x'.repeat(MAX_STRING)}…(+4800 chars)`);
  });

  it('keeps strings of exactly 200 chars whole', () => {
    expect(redactParams('y'.repeat(MAX_STRING))).toBe('y'.repeat(MAX_STRING));
  });

  it('never splits a surrogate pair when cutting', () => {
    const cut = cutString(`${'a'.repeat(MAX_STRING - 1)}😀tail`);
    expect(cut.startsWith(`${'a'.repeat(MAX_STRING - 1)}…`)).toBe(true);
    expect(cut).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });

  it('masks values under secret-looking keys, whatever their type or depth', () => {
    const out = redactParams({
      api_key: 'sk-1',
      apiKey: 'sk-2',
      Authorization: 'Bearer x',
      nested: { db: { password: { value: 'p' } }, session_cookie: ['a'] },
      accessToken: 42,
      private_key: 'k',
      credentials: null,
      passwd: 'p',
      client_secret: 's',
      name: 'notes.txt',
    });
    expect(out).toEqual({
      api_key: MASK,
      apiKey: MASK,
      Authorization: MASK,
      nested: { db: { password: MASK }, session_cookie: MASK },
      accessToken: MASK,
      private_key: MASK,
      credentials: MASK,
      passwd: MASK,
      client_secret: MASK,
      name: 'notes.txt',
    });
  });

  it('masks the secrets imported tools name otherwise, and leaves look-alike names alone', () => {
    const out = redactParams({
      pwd: 'a',
      passphrase: 'b',
      pin: '1234',
      card_pin: '4321',
      github_pat: 'ghp_x',
      accessKey: 'AKIA',
      auth: 'c',
      otp: '123456',
      sessionId: 'd',
      author: 'Ada',
      mapping: 'm',
      path: 'notes/a.txt',
      spin: 'up',
    });
    expect(out).toEqual({
      pwd: MASK,
      passphrase: MASK,
      pin: MASK,
      card_pin: MASK,
      github_pat: MASK,
      accessKey: MASK,
      auth: MASK,
      otp: MASK,
      sessionId: MASK,
      author: 'Ada',
      mapping: 'm',
      path: 'notes/a.txt',
      spin: 'up',
    });
  });

  it('masks a password written inside a URL, keeping the rest of the value', () => {
    expect(
      redactParams({
        dsn: 'postgres://me:S3cret@db.local:5432/app',
        text: 'see https://user:hunter2@example.com/x and https://example.com/a:b',
      }),
    ).toEqual({
      dsn: `postgres://me:${MASK}@db.local:5432/app`,
      text: `see https://user:${MASK}@example.com/x and https://example.com/a:b`,
    });
  });

  it('masks a URL password up to the last @ of the authority, as URL parsers read it', () => {
    expect(redactParams({ u: 'https://u:p@ss@host/x?y=1' })).toEqual({
      u: `https://u:${MASK}@host/x?y=1`,
    });
  });

  it('masks URL passwords in linear time: a long run of scheme characters is read once', () => {
    // Quadratic before: 100 000 characters took 4 s, a megabyte minutes, on every call's params.
    const long = `://${'a.'.repeat(500_000)}`;
    expect(redactParams({ q: long })).toEqual({ q: cutString(long) });
    expect(redactParams({ u: `x ${'a'.repeat(50_000)}://me:pw@host` })).toEqual({
      u: cutString(`x ${'a'.repeat(50_000)}://me:${MASK}@host`),
    });
  });

  it('cuts arrays longer than 50 items with a marker', () => {
    const out = redactParams({ items: Array.from({ length: 120 }, (_, i) => i) }) as {
      items: unknown[];
    };
    expect(out.items).toHaveLength(MAX_ITEMS + 1);
    expect(out.items[MAX_ITEMS - 1]).toBe(MAX_ITEMS - 1);
    expect(out.items[MAX_ITEMS]).toBe('…(+70 items)');
  });

  it('cuts nesting deeper than 8 levels', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 20; i++) deep = { d: deep };
    let out = redactParams(deep);
    let levels = 0;
    while (typeof out === 'object' && out !== null) {
      out = (out as { d: unknown }).d;
      levels += 1;
    }
    expect(levels).toBe(MAX_DEPTH);
    expect(out).toBe('[…object]');
  });

  it('bounds the total size of what it keeps', () => {
    const wide = Array.from({ length: 50 }, () =>
      Array.from({ length: 50 }, () => Array(50).fill(1)),
    );
    const text = JSON.stringify(redactParams(wide));
    expect(text.length).toBeLessThan(MAX_NODES * 20);
    expect(text).toContain('…(+');
  });

  it('survives cycles, throwing getters, bigints and non-JSON values', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const hostile = {
      get boom(): never {
        throw new Error('getter');
      },
    };
    expect(redactParams(cyclic)).toEqual({ a: 1, self: '[Circular]' });
    expect(redactParams(hostile)).toEqual({ boom: '[unreadable]' });
    expect(redactParams({ n: 10n, f: () => 1, u: undefined, x: NaN, arr: [undefined] })).toEqual({
      n: '10',
      x: null,
      arr: [null],
    });
    expect(redactParams(undefined)).toBeNull();
  });

  it('keeps a __proto__ key from JSON as plain data', () => {
    const out = redactParams(JSON.parse('{"__proto__":{"polluted":true}}')) as object;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('never throws and always yields JSON that round-trips (property)', () => {
    fc.assert(
      fc.property(
        fc.anything({ withBigInt: true, withDate: true, withTypedArray: true }),
        (value) => {
          const out = redactParams(value);
          expect(JSON.parse(JSON.stringify(out))).toEqual(out);
        },
      ),
    );
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 2 } })).toBe(
      '{"a":{"c":2,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('gives the same text whatever order keys were inserted in (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(obj));
        expect(JSON.parse(canonicalJson(obj))).toEqual(JSON.parse(JSON.stringify(obj)));
      }),
    );
  });

  it('follows JSON.stringify for undefined, functions and non-finite numbers', () => {
    expect(canonicalJson({ u: undefined, f: () => 1, n: Infinity, a: [undefined] })).toBe(
      '{"a":[null],"n":null}',
    );
    expect(canonicalJson(undefined)).toBe('null');
  });
});

describe('sha256Hex', () => {
  it('is the standard sha256 of the UTF-8 text', () => {
    expect(sha256Hex('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});

describe('secretValues and maskSecretsIn', () => {
  it('finds the values redaction masks, longest first, and skips ones too short to look for', () => {
    const found = secretValues({
      token: 'tok-123456',
      nested: { password: ['pass-abcdef', 1234567], pin: '12' },
      dsn: 'mysql://me:p@ss-word@db/x',
      name: 'not-a-secret-value',
    });
    expect(found).toEqual(['pass-abcdef', 'tok-123456', 'p@ss-word', '1234567']);
  });

  it('masks each found value and URL passwords in a text', () => {
    const secrets = secretValues({ api_key: 'sk-live-ABCDEF', url: 'https://u:pw-xyz123@h' });
    expect(maskSecretsIn('key sk-live-ABCDEF; pw-xyz123 at https://a:other@h', secrets)).toBe(
      `key ${MASK}; ${MASK} at https://a:${MASK}@h`,
    );
  });

  it('stays within its bounds for hostile params', () => {
    const many = Object.fromEntries(
      Array.from({ length: 500 }, (_, i) => [`token${i}`, `secret-${i}`]),
    );
    expect(secretValues(many).length).toBeLessThanOrEqual(32);
    let deep: unknown = { token: 'deep-secret' };
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    expect(secretValues(deep)).toEqual([]);
  });
});
