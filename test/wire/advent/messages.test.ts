import { describe, expect, it } from 'vitest';
import { adventParameters, registerServices } from '../../../app/wire/advent/messages.js';
import type { ToolEntry } from '../../../app/wire/session.js';

describe('the Advent register message', () => {
  it('sends the description and only the keywords the Advent server documents', () => {
    const schema = {
      type: 'object',
      properties: {
        format: { type: 'string', enum: ['a', 'b'], description: 'which', pattern: '^a' },
        list: { type: 'array', items: { type: 'integer', minimum: 0, multipleOf: 2 } },
      },
      required: ['format'],
      additionalProperties: false,
    };
    const tool: ToolEntry = {
      name: 's',
      description: 'the s service',
      inputSchema: schema,
      risk: 'read',
      userOnly: false,
    };
    expect(registerServices([tool])).toEqual({
      s: {
        description: 'the s service',
        parameters: {
          type: 'object',
          properties: {
            format: { type: 'string', enum: ['a', 'b'], description: 'which' },
            list: { type: 'array', items: { type: 'integer', minimum: 0 } },
          },
          required: ['format'],
        },
      },
    });
    // A copy: the server description can be serialized or changed without touching the service.
    expect(adventParameters(schema)).not.toBe(schema);
    expect((adventParameters(schema) as { required: unknown }).required).not.toBe(schema.required);
  });

  it('leaves user-only services out: the server never sees them', () => {
    const tool = (name: string, userOnly: boolean): ToolEntry => ({
      name,
      description: name,
      inputSchema: { type: 'object' },
      risk: 'read',
      userOnly,
    });
    expect(Object.keys(registerServices([tool('on', false), tool('mine', true)]))).toEqual(['on']);
  });
});
