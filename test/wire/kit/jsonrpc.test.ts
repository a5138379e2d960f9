import { describe, expect, it } from 'vitest';
import {
  RPC,
  classify,
  parseText,
  preview,
  rpcError,
  rpcResult,
} from '../../../app/wire/kit/jsonrpc.js';

describe('JSON-RPC classification: liberal in what it accepts', () => {
  it('reads requests with number or string ids, with or without "jsonrpc"', () => {
    expect(classify({ jsonrpc: '2.0', id: 1, method: 'ping' })).toEqual({
      kind: 'request',
      id: 1,
      method: 'ping',
      params: {},
    });
    expect(classify({ id: 'a1', method: 'tools/list', params: { cursor: 'x' } })).toEqual({
      kind: 'request',
      id: 'a1',
      method: 'tools/list',
      params: { cursor: 'x' },
    });
  });

  it('reads a message without an id (or with a null id) as a notification', () => {
    expect(classify({ jsonrpc: '2.0', method: 'notifications/initialized' })).toEqual({
      kind: 'notification',
      method: 'notifications/initialized',
      params: {},
    });
    expect(classify({ jsonrpc: '2.0', id: null, method: 'x' }).kind).toBe('notification');
  });

  it('reads responses, keeping a well-formed error and its id', () => {
    expect(classify({ jsonrpc: '2.0', id: 3, result: { ok: 1 } })).toEqual({
      kind: 'response',
      id: 3,
      result: { ok: 1 },
      error: undefined,
    });
    expect(classify({ id: null, error: { code: -32700, message: 'bad' } })).toEqual({
      kind: 'response',
      id: null,
      result: undefined,
      error: { code: -32700, message: 'bad' },
    });
  });

  it('says what is wrong with what it cannot use, keeping the id when there is one', () => {
    expect(classify([{ id: 1, method: 'ping' }])).toEqual({
      kind: 'invalid',
      message: 'a JSON-RPC message must be a JSON object',
    });
    expect(classify('ping')).toMatchObject({ kind: 'invalid' });
    expect(classify(null)).toMatchObject({ kind: 'invalid' });
    expect(classify({ id: true, method: 'ping' })).toEqual({
      kind: 'invalid',
      message: 'the id must be a string or a number',
    });
    expect(classify({ id: 4, method: 7 })).toEqual({
      kind: 'invalid',
      id: 4,
      message: "'method' must be a non-empty string",
    });
    expect(classify({ id: 5, method: '' })).toMatchObject({ kind: 'invalid', id: 5 });
    expect(classify({ id: 6 })).toEqual({
      kind: 'invalid',
      id: 6,
      message: "the message has neither 'method' nor 'result'",
    });
  });

  it('reports text that is not JSON instead of throwing', () => {
    const m = parseText('{"id":1,');
    expect(m.kind).toBe('invalid');
    expect(m.kind === 'invalid' && m.message).toMatch(/^not JSON \(/);
    expect(parseText('{"id":2,"method":"ping"}')).toMatchObject({ kind: 'request', id: 2 });
  });
});

describe('JSON-RPC replies: strict in what it sends', () => {
  it('always carries jsonrpc 2.0 and the id unchanged, type included', () => {
    expect(rpcResult(7, {})).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
    expect(rpcResult('7', {}).id).toBe('7');
    expect(rpcError(8, RPC.METHOD_NOT_FOUND, 'no')).toEqual({
      jsonrpc: '2.0',
      id: 8,
      error: { code: -32601, message: 'no' },
    });
    expect(rpcError(null, RPC.PARSE_ERROR, 'bad', { at: 3 })).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'bad', data: { at: 3 } },
    });
  });

  it('uses the standard codes', () => {
    expect(RPC).toEqual({
      PARSE_ERROR: -32700,
      INVALID_REQUEST: -32600,
      METHOD_NOT_FOUND: -32601,
      INVALID_PARAMS: -32602,
      INTERNAL_ERROR: -32603,
    });
  });
});

describe('preview', () => {
  it('flattens and shortens a frame for a log line', () => {
    expect(preview('a\n  b\tc')).toBe('a b c');
    expect(preview('x'.repeat(300), 10)).toBe(`${'x'.repeat(10)}…`);
  });
});
