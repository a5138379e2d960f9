import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../app/contract/errors.js';
import {
  ROBOT_ERROR_CODES,
  executeResponse,
  parseServerText,
  readAck,
  readAiMessage,
  readExecute,
  robotErrorCode,
  toolDefinitions,
} from '../../../app/wire/robot/messages.js';

describe('robot messages: registration', () => {
  it('lists every non-user-only tool as remote/query with its schema', () => {
    const schema = { type: 'object', properties: {} };
    expect(
      toolDefinitions([
        {
          name: 'create_file',
          description: 'Create',
          inputSchema: schema,
          risk: 'write',
          userOnly: false,
        },
        {
          name: 'secret_tool',
          description: 'User only',
          inputSchema: schema,
          risk: 'read',
          userOnly: true,
        },
      ]),
    ).toEqual([
      {
        name: 'create_file',
        description: 'Create',
        main_type: 'remote',
        sub_type: 'query',
        parameters: schema,
      },
    ]);
  });

  it('reads both ack shapes as success, and an error or a failed status as a refusal', () => {
    const ack = (body: Record<string, unknown>) => {
      const m = parseServerText(JSON.stringify(body));
      if (m.kind !== 'response') throw new Error(`not a response: ${m.kind}`);
      return readAck(m);
    };
    expect(
      ack({ jsonrpc: '2.0', id: 'r', result: { status: 'registered', message: 'ok' } }),
    ).toEqual({
      ok: true,
    });
    expect(ack({ id: 'r', result: { status: 'success' } })).toEqual({ ok: true });
    expect(ack({ id: 'r', error: { code: -32000, message: 'no' } })).toEqual({
      ok: false,
      message: 'no',
    });
    expect(ack({ id: 'r', result: { status: 'error', message: 'bad tools' } })).toEqual({
      ok: false,
      message: 'bad tools',
    });
  });
});

describe('robot messages: what the server sends', () => {
  it('unwraps an event whose JSON was encoded twice', () => {
    const inner = JSON.stringify({
      jsonrpc: '2.0',
      method: 'mcp/ai/message',
      params: { type: 'chunk', content: 'hi' },
    });
    expect(parseServerText(JSON.stringify(inner))).toEqual({
      kind: 'notification',
      method: 'mcp/ai/message',
      params: { type: 'chunk', content: 'hi' },
    });
    expect(parseServerText('"just a string"').kind).toBe('invalid');
    expect(parseServerText('{').kind).toBe('invalid');
  });

  it('reads an execute’s tool and input; a missing input is {} and a JSON-string input is parsed', () => {
    expect(readExecute({ tool_name: 'a', tool_input: { x: 1 } })).toEqual({
      ok: true,
      tool: 'a',
      input: { x: 1 },
    });
    expect(readExecute({ tool_name: 'a' })).toEqual({ ok: true, tool: 'a', input: {} });
    expect(readExecute({ tool_name: 'a', tool_input: '{"x":2}' })).toEqual({
      ok: true,
      tool: 'a',
      input: { x: 2 },
    });
    expect(readExecute({ tool_input: {} })).toMatchObject({ ok: false, message: /tool_name/ });
    expect(readExecute([])).toMatchObject({ ok: false });
  });

  it('reads ai messages and reports unknown types', () => {
    expect(readAiMessage({ type: 'final', content: 'x' })).toEqual({ type: 'final', content: 'x' });
    expect(readAiMessage({ type: 'thought' })).toEqual({ type: 'thought', content: '' });
    expect(readAiMessage({ type: 'mood', content: 'x' })).toEqual({ unknownType: 'mood' });
    expect(readAiMessage(null)).toBeUndefined();
  });
});

describe('robot messages: tool results', () => {
  it('maps every gate error code into -32000…-32099', () => {
    for (const code of ERROR_CODES) {
      const n = ROBOT_ERROR_CODES[code];
      expect(n, code).toBeGreaterThanOrEqual(-32099);
      expect(n, code).toBeLessThanOrEqual(-32000);
    }
    expect(robotErrorCode('unknown_service')).toBe(-32001);
    expect(robotErrorCode('denied')).toBe(-32003);
    expect(robotErrorCode('duplicate')).toBe(-32006);
    expect(robotErrorCode('something_new')).toBe(-32000);
  });

  it('keeps data as data, never drops the result member, and answers unencodable data with an error', () => {
    expect(JSON.parse(executeResponse('x', { ok: true, data: { a: 1 } }))).toEqual({
      jsonrpc: '2.0',
      id: 'x',
      result: { a: 1 },
    });
    expect(JSON.parse(executeResponse(3, { ok: true, data: 'text' }))).toEqual({
      jsonrpc: '2.0',
      id: 3,
      result: 'text',
    });
    expect(JSON.parse(executeResponse('x', { ok: true, data: undefined }))).toEqual({
      jsonrpc: '2.0',
      id: 'x',
      result: null,
    });
    expect(JSON.parse(executeResponse('x', { ok: true, data: { n: 1n } }))).toMatchObject({
      id: 'x',
      error: { code: -32004, message: /could not be encoded/ },
    });
    expect(
      JSON.parse(executeResponse('x', { ok: false, code: 'denied', message: 'the user said no' })),
    ).toEqual({ jsonrpc: '2.0', id: 'x', error: { code: -32003, message: 'the user said no' } });
  });
});
