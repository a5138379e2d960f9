import { describe, expect, it } from 'vitest';
import { canonicalJson, redactParams, sha256Hex } from '../../app/audit/redact.js';
import { describeParamError } from '../../app/services/param_errors.js';
import { MAX_PARAMS_DEPTH, paramsShapeProblem } from '../../app/audit/bounds.js';

/** `{a:{a:{…}}}` nested `depth` levels, built without recursion. */
export function nested(depth: number, leaf: unknown = 1): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

function nestedArray(depth: number): unknown {
  let v: unknown = [];
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

describe('deep params', () => {
  it.each([5_000, 100_000])('hashes and redacts %i levels without overflowing the stack', (d) => {
    const deep = nested(d);
    const text = canonicalJson(deep);
    expect(text.startsWith('{"a":{"a":')).toBe(true);
    expect(text.length).toBe(d * 6 + 1);
    expect(sha256Hex(canonicalJson(nestedArray(d)))).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(redactParams(deep)).length).toBeLessThan(1000);
  });

  it('gives the same canonical text as before for ordinary values', () => {
    expect(canonicalJson({ b: [1, { d: null, c: 'x' }], a: true, u: undefined })).toBe(
      '{"a":true,"b":[1,{"c":"x","d":null}]}',
    );
    expect(canonicalJson([undefined, () => 1, Number.NaN])).toBe('[null,null,null]');
    const cyc: Record<string, unknown> = { x: 1 };
    cyc.self = cyc;
    expect(canonicalJson(cyc)).toBe('{"self":"[Circular]","x":1}');
  });

  it('names what is wrong with params nested too deep, without recursing', () => {
    expect(paramsShapeProblem(nested(MAX_PARAMS_DEPTH - 1))).toBeUndefined();
    expect(paramsShapeProblem(nested(100_000))).toMatch(
      new RegExp(`nested more than ${MAX_PARAMS_DEPTH} levels deep`),
    );
    expect(paramsShapeProblem(nestedArray(100_000))).toMatch(/nested more than/);
  });

  it('describes a param error at a very long path in a bounded sentence', () => {
    const path = `/${Array.from({ length: 50_000 }, () => 'a').join('/')}`;
    const text = describeParamError(
      [
        {
          keyword: 'type',
          instancePath: path,
          schemaPath: '#/type',
          params: { type: 'string' },
        },
      ],
      nested(50_000),
    );
    expect(text.length).toBeLessThan(400);
    expect(text).toMatch(/must be a string$/);
  });
});
