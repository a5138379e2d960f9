import { describe, expect, it } from 'vitest';
import {
  collectParams,
  fieldsOf,
  initialValues,
} from '../../renderer/features/services/schemaForm.js';

const createFile = {
  type: 'object',
  properties: {
    filename: { type: 'string', minLength: 1, maxLength: 1024, description: 'Path' },
    content: { type: 'string', description: 'Text' },
    overwrite: { type: 'boolean' },
  },
  required: ['filename', 'content'],
  additionalProperties: false,
};

describe('JSON Schema → form fields', () => {
  it('maps strings, long strings, booleans and keeps required and descriptions', () => {
    const fields = fieldsOf(createFile);
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ['filename', 'text', true],
      ['content', 'textarea', true],
      ['overwrite', 'checkbox', false],
    ]);
    expect(fields[0]).toMatchObject({ description: 'Path', minLength: 1, maxLength: 1024 });
  });

  it('maps enums to selects and numbers with their bounds', () => {
    const fields = fieldsOf({
      type: 'object',
      properties: {
        format: { type: 'string', enum: ['simple', 'detailed'] },
        count: { type: 'integer', minimum: 1, maximum: 10 },
        ratio: { type: 'number', exclusiveMinimum: 0 },
        tags: { type: 'array', items: { type: 'string' } },
        nullable: { type: ['string', 'null'] },
      },
    });
    expect(fields.map((f) => f.kind)).toEqual(['select', 'number', 'number', 'json', 'text']);
    expect(fields[0]?.options).toEqual(['simple', 'detailed']);
    expect(fields[1]).toMatchObject({ integer: true, min: 1, max: 10 });
    expect(fields[2]).toMatchObject({ integer: false, min: 0 });
  });

  it('has no fields for a schema without properties', () => {
    expect(fieldsOf({ type: 'object' })).toEqual([]);
    expect(fieldsOf(null)).toEqual([]);
  });

  it('turns typed values into params, leaving out empty optional fields', () => {
    const fields = fieldsOf(createFile);
    const values = { ...initialValues(fields), filename: 'notes/todo.txt', content: '买牛奶' };
    expect(collectParams(fields, values)).toEqual({
      params: { filename: 'notes/todo.txt', content: '买牛奶' },
      problems: [],
    });
    expect(collectParams(fields, { ...values, overwrite: true }).params.overwrite).toBe(true);
  });

  it('reports missing required fields and bad numbers', () => {
    const fields = fieldsOf({
      type: 'object',
      properties: {
        name: { type: 'string' },
        n: { type: 'integer', minimum: 1, maximum: 5 },
        choice: { enum: ['a', 'b'] },
        data: { type: 'object' },
      },
      required: ['name', 'n'],
    });
    const base = initialValues(fields);
    expect(collectParams(fields, base).problems).toEqual([
      { field: 'name', kind: 'required' },
      { field: 'n', kind: 'required' },
    ]);
    const r = collectParams(fields, { ...base, name: 'x', n: '9', data: '{oops' });
    expect(r.problems).toEqual([
      { field: 'n', kind: 'max', max: 5 },
      { field: 'data', kind: 'json' },
    ]);
    expect(collectParams(fields, { ...base, name: 'x', n: '2.5' }).problems).toEqual([
      { field: 'n', kind: 'integer' },
    ]);
    const ok = collectParams(fields, { ...base, name: 'x', n: '3', choice: '1', data: '{"a":1}' });
    expect(ok).toEqual({ params: { name: 'x', n: 3, choice: 'b', data: { a: 1 } }, problems: [] });
  });

  it('starts from schema defaults', () => {
    const fields = fieldsOf({
      type: 'object',
      properties: {
        format: { type: 'string', enum: ['simple', 'detailed'], default: 'detailed' },
        loud: { type: 'boolean', default: true },
        n: { type: 'number', default: 2 },
      },
    });
    const values = initialValues(fields);
    expect(values).toEqual({ format: '1', loud: true, n: '2' });
    // A default-true checkbox turned off is sent as false, not left out.
    expect(collectParams(fields, { ...values, loud: false }).params).toEqual({
      format: 'detailed',
      loud: false,
      n: 2,
    });
  });
});
