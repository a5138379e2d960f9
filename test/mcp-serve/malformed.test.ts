/**
 * A line the SDK's stdio transport cannot read (not JSON, a batch, not a JSON-RPC message) is
 * answered with JSON-RPC's error for it, over stdio and the running agent's socket alike, instead
 * of being dropped while the client waits for its timeout; the session goes on with the next line.
 */
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import {
  NOT_JSON,
  NO_BATCHES,
  malformedAnswer,
  refusalNotice,
} from '../../app/mcp-serve/malformed.js';
import { connectToAgent } from '../../app/mcp-serve/relay.js';
import { until } from '../helpers/wait.js';
import { type ServeRig, startServe, helloLines, line } from './helpers.js';

let rig: ServeRig | undefined;
let client: RawClient | undefined;
afterEach(async () => {
  await client?.end();
  client = undefined;
  await rig?.close();
  rig = undefined;
});

interface Answer {
  jsonrpc: string;
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

/** A client writing raw bytes to one MCP session and reading what comes back. */
interface RawClient {
  write(text: string): void;
  /** Every answer so far, one JSON message a line. */
  answers(): Answer[];
  /** The session is still open on the server's side. */
  open(): boolean;
  end(): Promise<void>;
}

async function overStdio(serving: ServeRig): Promise<RawClient> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let out = '';
  let ended = false;
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  const served = serving.serve.serveStdio(stdin, stdout).then(() => void (ended = true));
  return {
    write: (text) => void stdin.write(text),
    answers: () => parse(out),
    open: () => !ended,
    end: async () => {
      stdin.end();
      await served;
    },
  };
}

async function overSocket(serving: ServeRig): Promise<RawClient> {
  await serving.serve.listen();
  const socket = (await connectToAgent(path.join(serving.dir, 'data')))!;
  let out = '';
  socket.on('data', (c: Buffer) => (out += c.toString()));
  return {
    write: (text) => void socket.write(text),
    answers: () => parse(out),
    open: () => !socket.destroyed,
    end: async () => void socket.destroy(),
  };
}

const parse = (text: string): Answer[] =>
  text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Answer);

const ping = (id: number) => line({ jsonrpc: '2.0', id, method: 'ping' });
const invalidRequest = (message: string, id?: number): Answer => ({
  jsonrpc: '2.0',
  ...(id !== undefined && { id }),
  error: { code: -32600, message },
});

/** Something a line must never carry into the log. */
const SECRET = 'sk-live-0123456789abcdef';

const cases: { name: string; sent: string; answered: Answer[] }[] = [
  {
    name: 'a line that is not JSON is answered Parse error (-32700), without an id',
    sent: `token=${SECRET} is not JSON\n{"jsonrpc":"2.0","id":5,"method":"ping"\n`,
    answered: [
      { jsonrpc: '2.0', error: { code: -32700, message: NOT_JSON } },
      { jsonrpc: '2.0', error: { code: -32700, message: NOT_JSON } },
    ],
  },
  {
    name: 'a batch (an empty one too) is answered Invalid Request, and none of it is run',
    sent: `[${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' })}]\n[]\n`,
    answered: [invalidRequest(NO_BATCHES), invalidRequest(NO_BATCHES)],
  },
  {
    name: 'a request with an id that is no id is answered Invalid Request, without an id',
    sent: `{"jsonrpc":"2.0","id":{},"method":"ping"}\n`,
    answered: [invalidRequest('Invalid Request: "id" must be a string or an integer')],
  },
  {
    name: 'a request without "jsonrpc" is answered Invalid Request under its id',
    sent: `{"id":7,"method":"tools/list","params":{"note":"${SECRET}"}}\n`,
    answered: [invalidRequest('Invalid Request: a message must have "jsonrpc": "2.0"', 7)],
  },
  {
    name: 'a blank line is not answered',
    sent: '\n   \r\n\t\n',
    answered: [],
  },
];

describe.each([
  ['on stdio', overStdio],
  ["on the agent's socket", overSocket],
])('a line the SDK cannot read, %s', (_where, open) => {
  it.each(cases)('$name, and the session goes on', async ({ sent, answered }) => {
    const logged: string[] = [];
    rig = await startServe({}, { log: (_level, m) => void logged.push(m) });
    client = await open(rig);
    client.write(helloLines('sloppy-client'));
    await until(() => client!.answers().some((a) => a.id === 1), 'initialize answered');
    client.write(sent);
    client.write(ping(99));
    await until(() => client!.answers().some((a) => a.id === 99), 'the next request answered');

    expect(client.answers().slice(1)).toEqual([
      ...answered,
      { jsonrpc: '2.0', id: 99, result: {} },
    ]);
    expect(client.open()).toBe(true);
    // One line on the log for each refusal, saying why; none of the line's content.
    const refusals = logged.filter((m) => m.includes('was refused'));
    expect(refusals).toEqual(
      answered.map((a) => refusalNotice(a.id as number | undefined, a.error!.message)),
    );
    expect(logged.join('\n')).not.toContain(SECRET);
  });
});

describe('malformedAnswer', () => {
  const of = (text: string) => malformedAnswer(Buffer.from(`${text}\n`));

  it('lets a message the SDK reads, and a blank line, pass unanswered', () => {
    expect(of(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }))).toBeUndefined();
    expect(of(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).toBe(
      undefined,
    );
    expect(of('  \r')).toBeUndefined();
  });

  it("answers under a request's id only when the object has a method and a valid id", () => {
    expect(of('{"jsonrpc":"2.0","id":"a-1","method":"ping","params":[1]}')).toEqual({
      jsonrpc: '2.0',
      id: 'a-1',
      error: { code: -32600, message: 'Invalid Request: "params" must be an object' },
    });
    expect(of('{"jsonrpc":"2.0","id":4,"method":"ping","extra":true}')).toMatchObject({ id: 4 });
    // A response (our question answered) that the SDK refuses: its id is our request's, not one.
    expect(of('{"jsonrpc":"2.0","id":3,"result":1}')).toEqual(
      invalidRequest(
        'Invalid Request: not a JSON-RPC request, notification or response this server reads',
      ),
    );
    expect(of('{"jsonrpc":"2.0","id":1.5,"method":"ping"}')).not.toHaveProperty('id');
    expect(of('{"jsonrpc":"2.0","id":null,"method":"ping"}')).not.toHaveProperty('id');
    expect(of('"ping"')).toEqual(
      invalidRequest('Invalid Request: a message must be a JSON object'),
    );
  });

  it('the log shows a long id cut short', () => {
    expect(refusalNotice('x'.repeat(1000), 'why')).toBe(
      `an MCP client's message (request "${'x'.repeat(39)}…) was refused: why`,
    );
    expect(refusalNotice(undefined, 'why')).toBe("an MCP client's message was refused: why");
  });
});
