/**
 * A long line written in small pieces (stdio, the data folder's socket): the SDK's buffer is
 * handed whole lines, so it joins the pieces once instead of once per piece (work quadratic in
 * the line's length), and a line past the bound is answered with an error and skipped.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type net from 'node:net';
import { PassThrough } from 'node:stream';
import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_MESSAGE_BYTES } from '../../app/mcp-serve/limits.js';
import { REFUSED_EDGE_BYTES, type RefusedLine, lineSplitter } from '../../app/mcp-serve/lines.js';
import { refusedRequestId } from '../../app/mcp-serve/socket.js';
import { connectToAgent } from '../../app/mcp-serve/relay.js';
import { until } from '../helpers/wait.js';
import { type ServeRig, startServe, helloLines, line } from './helpers.js';

let rig: ServeRig | undefined;
let client: net.Socket | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  client?.destroy();
  client = undefined;
  await rig?.close();
  rig = undefined;
});

const hello = helloLines('slow-writer');
/** A ping of about `bytes` bytes (its padding is ignored by the server). */
const bigPing = (bytes: number): Buffer =>
  Buffer.from(line({ jsonrpc: '2.0', id: 2, method: 'ping', params: { pad: 'p'.repeat(bytes) } }));

/** Write `data` in pieces of `size` bytes, each in a turn of its own (as a slow writer's come). */
async function dribble(to: NodeJS.WritableStream, data: Buffer, size: number): Promise<void> {
  for (let i = 0; i < data.length; i += size) {
    to.write(data.subarray(i, i + size));
    await new Promise((r) => setImmediate(r));
  }
}

/** What the SDK's ReadBuffer is handed: how many times, and the bytes it then had to join. */
function watchReadBuffer() {
  const seen = { appends: 0, copied: 0 };
  const append = ReadBuffer.prototype.append;
  vi.spyOn(ReadBuffer.prototype, 'append').mockImplementation(function (
    this: ReadBuffer,
    chunk: Buffer,
  ) {
    seen.appends += 1;
    const held = (this as unknown as { _buffer?: Buffer })._buffer;
    seen.copied += held ? held.length + chunk.length : 0;
    return append.call(this, chunk);
  });
  return seen;
}

describe('lineSplitter', () => {
  it('gives whole lines, one per chunk, however the bytes were cut', async () => {
    const overflow = vi.fn();
    const lines = lineSplitter({ maxBytes: 100, overflow });
    const got: string[] = [];
    lines.on('data', (b: Buffer) => got.push(b.toString()));
    for (const piece of ['a', 'bc\nde', 'f\n\ng\nh', 'i', '\n', 'tail'])
      lines.write(Buffer.from(piece));
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual(['abc\n', 'def\n', '\n', 'g\n', 'hi\n']);
    expect(overflow).not.toHaveBeenCalled();
  });

  it('a line sent a byte at a time arrives whole and exact', async () => {
    const lines = lineSplitter({ maxBytes: 10_000, overflow: () => undefined });
    const got: Buffer[] = [];
    lines.on('data', (b: Buffer) => got.push(b));
    const text = Buffer.from(`${'0123456789'.repeat(500)}\n`);
    for (let i = 0; i < text.length; i++) lines.write(text.subarray(i, i + 1));
    await new Promise((r) => setImmediate(r));
    expect(got).toHaveLength(1);
    expect(got[0]!.equals(text)).toBe(true);
  });

  it('a line past the bound, newline included, is dropped to its newline and told with its edges; the lines after it are given', async () => {
    const overflow = vi.fn<(line: RefusedLine) => void>();
    const lines = lineSplitter({ maxBytes: 10, overflow });
    const got: string[] = [];
    lines.on('data', (b: Buffer) => got.push(b.toString()));
    lines.write(Buffer.from('123456789\n')); // 10 bytes: at the bound
    lines.write(Buffer.from('12345'));
    lines.write(Buffer.from('67890'));
    lines.write(Buffer.from('ab\nok\n'));
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual(['123456789\n', 'ok\n']);
    expect(overflow).toHaveBeenCalledTimes(1);
    const refused = overflow.mock.calls[0]![0];
    expect(refused.head.toString()).toBe('1234567890ab\n');
    expect(refused.tail.toString()).toBe('1234567890ab\n');
  });

  it('of a long refused line only its first and last bytes are kept, wherever its pieces were cut', async () => {
    const overflow = vi.fn<(line: RefusedLine) => void>();
    const lines = lineSplitter({ maxBytes: 1000, overflow });
    const got: string[] = [];
    lines.on('data', (b: Buffer) => got.push(b.toString()));
    const text = `HEAD${'.'.repeat(5000)}TAIL\n`;
    // The bound is passed in the middle of a piece, and the end comes a byte at a time.
    lines.write(Buffer.from(text.slice(0, 900)));
    lines.write(Buffer.from(text.slice(900, text.length - 3)));
    for (const c of `${text.slice(-3)}next\n`) lines.write(Buffer.from(c));
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual(['next\n']);
    expect(overflow).toHaveBeenCalledTimes(1);
    const { head, tail } = overflow.mock.calls[0]![0];
    expect(head.toString()).toBe(text.slice(0, REFUSED_EDGE_BYTES));
    expect(tail.toString()).toBe(text.slice(-REFUSED_EDGE_BYTES));
  });

  it('a line passing the bound at its newline keeps the end it had before', async () => {
    const overflow = vi.fn<(line: RefusedLine) => void>();
    const lines = lineSplitter({ maxBytes: 1000, overflow });
    lines.resume();
    const text = `${'.'.repeat(990)},"jsonrpc":"2.0","id":42}\n`;
    lines.write(Buffer.from(text.slice(0, -3)));
    lines.write(Buffer.from(text.slice(-3)));
    await new Promise((r) => setImmediate(r));
    expect(overflow.mock.calls[0]![0].tail.toString()).toBe(text.slice(-REFUSED_EDGE_BYTES));
  });
});

describe('refusedRequestId', () => {
  const edges = (line: string): RefusedLine => ({
    head: Buffer.from(line.slice(0, REFUSED_EDGE_BYTES)),
    tail: Buffer.from(line.slice(-REFUSED_EDGE_BYTES)),
  });
  const big = { content: 'x'.repeat(1000) };
  const of = (message: unknown) => refusedRequestId(edges(line(message)));

  it("finds a request's id among its first keys, or as its last key (the SDK writes it last)", () => {
    expect(of({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: big })).toBe(5);
    expect(of({ method: 'tools/call', params: big, jsonrpc: '2.0', id: 'req-9' })).toBe('req-9');
    expect(of({ id: -3, jsonrpc: '2.0', method: 'tools/call', params: big })).toBe(-3);
    expect(
      refusedRequestId(edges(' { "method" : "tools/call", "params": {}, "id" : 12 } \r\n')),
    ).toBe(12);
  });

  it('takes no id it cannot be sure of: a response, a nested id, a line not begun with plain keys, an id no request may have', () => {
    // The client answering a question of ours: our error would read as the answer to its own id 3.
    expect(of({ jsonrpc: '2.0', id: 3, result: big })).toBeUndefined();
    expect(of({ result: big, jsonrpc: '2.0', id: 3 })).toBeUndefined();
    // "method" only after something that is not a plain value: request or response is not known.
    expect(of({ id: 4, params: big, method: 'tools/call' })).toBeUndefined();
    // An id inside the arguments, the outer object's own not at either edge.
    expect(of({ method: 'tools/call', params: { ...big, id: 8 } })).toBeUndefined();
    expect(of({ method: 'tools/call', params: big, jsonrpc: '2.0', id: 1.5 })).toBeUndefined();
    expect(of({ method: 'tools/call', params: big, id: { a: 1 } })).toBeUndefined();
    expect(of({ method: 7, id: 1, params: big })).toBeUndefined();
    expect(refusedRequestId(edges(`["x", ${'1,'.repeat(100)} {"id":2}]\n`))).toBeUndefined();
    // Inside a string, the last key is not `id`.
    expect(of({ method: 'tools/call', params: big, note: ',"id":6}' })).toBeUndefined();
  });
});

describe('a long line in small pieces', () => {
  const size = 1024 * 1024;
  const piece = 1024;

  it('on stdio: the SDK buffer takes it once, not once per piece', async () => {
    rig = await startServe();
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    const seen = watchReadBuffer();
    const served = rig.serve.serveStdio(stdin, stdout);
    stdin.write(hello);
    await until(() => out.includes('"id":1'), 'initialize answered');
    await dribble(stdin, bigPing(size), piece);
    await until(() => out.includes('"id":2'), 'the long ping answered');
    // initialize, initialized, the ping: one append each, and about the ping's bytes joined once.
    expect(seen.appends).toBe(3);
    expect(seen.copied).toBeLessThan(2 * size);
    stdin.end();
    await served;
  });

  it("on the agent's socket: the SDK buffer takes it once, not once per piece", async () => {
    rig = await startServe();
    await rig.serve.listen();
    const seen = watchReadBuffer();
    client = (await connectToAgent(path.join(rig.dir, 'data')))!;
    let out = '';
    client.on('data', (c: Buffer) => (out += c.toString()));
    client.write(hello);
    await until(() => out.includes('"id":1'), 'initialize answered');
    await dribble(client, bigPing(size), piece);
    await until(() => out.includes('"id":2'), 'the long ping answered');
    expect(seen.appends).toBe(3);
    expect(seen.copied).toBeLessThan(2 * size);
  });

  /** The answers on `text` so far, one JSON message a line. */
  const answersIn = (text: string): { id?: unknown; error?: { code: number; message: string } }[] =>
    text
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { id?: unknown; error?: { code: number; message: string } });
  /** A `tools/call` past the bound as the SDK's client writes it: its id last. */
  const tooBig = (id: number): Buffer =>
    Buffer.from(
      line({
        method: 'tools/call',
        params: {
          name: 'create_file',
          arguments: { filename: 'big.txt', content: 'x'.repeat(MAX_MESSAGE_BYTES) },
        },
        jsonrpc: '2.0',
        id,
      }),
    );
  const ping = (id: number) => line({ jsonrpc: '2.0', id, method: 'ping' });

  it('past the bound on stdio, the request is answered with an error under its id, and the session goes on', async () => {
    const refusals: string[] = [];
    rig = await startServe({}, { log: (level, m) => void (level === 'warn' && refusals.push(m)) });
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    const served = rig.serve.serveStdio(stdin, stdout);
    stdin.write(hello);
    await dribble(stdin, tooBig(2), 256 * 1024);
    stdin.write(ping(3));
    await until(() => out.includes('"id":3'), 'the next request answered');
    expect(answersIn(out).find((a) => a.id === 2)).toEqual({
      jsonrpc: '2.0',
      id: 2,
      error: {
        code: -32600,
        message: `a message may be at most ${MAX_MESSAGE_BYTES} bytes; a longer one is not read`,
      },
    });
    expect(refusals).toEqual([
      `an MCP client's message (request 2) was refused: a message may be at most ${MAX_MESSAGE_BYTES} bytes; a longer one is not read`,
    ]);
    expect(existsSync(path.join(rig.dir, 'files', 'big.txt'))).toBe(false);
    // Stdin is let go when the session ends: nothing is piped from it any more.
    stdin.end();
    await served;
    expect(stdin.listenerCount('data')).toBe(0);
  });

  it("past the bound on the agent's socket, the request is answered with an error under its id, and the session goes on", async () => {
    rig = await startServe();
    await rig.serve.listen();
    client = (await connectToAgent(path.join(rig.dir, 'data')))!;
    let out = '';
    client.on('data', (c: Buffer) => (out += c.toString()));
    client.write(hello);
    await dribble(client, tooBig(2), 256 * 1024);
    client.write(ping(3));
    await until(() => out.includes('"id":3'), 'the next request answered');
    expect(answersIn(out).find((a) => a.id === 2)?.error).toMatchObject({ code: -32600 });
    expect(client.destroyed).toBe(false);
  });
});
