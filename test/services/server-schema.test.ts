import { describe, expect, it } from 'vitest';
import { plainTypes } from '../../app/services/server-schema.js';

describe('parameters as voice servers see them', () => {
  it('shows optional types without null, at any depth; values stay as they are', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: ['string', 'null'] },
        b: { type: ['number', 'string'] },
        list: { type: 'array', items: { type: ['integer', 'null'], enum: [1, null] } },
        only: { type: ['null'] },
        c: { anyOf: [{ type: ['boolean', 'null'] }] },
      },
      default: { a: null },
    };
    expect(plainTypes(schema)).toEqual({
      type: 'object',
      properties: {
        a: { type: 'string' },
        b: { type: ['number', 'string'] },
        list: { type: 'array', items: { type: 'integer', enum: [1, null] } },
        only: { type: ['null'] },
        c: { anyOf: [{ type: 'boolean' }] },
      },
      default: { a: null },
    });
    // A copy: the service's own schema (what calls are checked against) is untouched.
    expect(schema.properties.a.type).toEqual(['string', 'null']);
  });
});
