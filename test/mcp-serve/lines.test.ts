/**
 * A long line written in small pieces (stdio, the data folder's socket): the SDK's buffer is
 * handed whole lines, so it joins the pieces once instead of once per piece (work quadratic in
 * the line's length), and a line past the bound still ends the session.
 */
import path from 'node:path';
import type net from 'node:net';
import { PassThrough } from 'node:stream';
import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_MESSAGE_BYTES } from '../../app/mcp-serve/limits.js';
import { lineSplitter } from '../../app/mcp-serve/lines.js';
import { connectToAgent } from '../../app/mcp-serve/relay.js';
import { until } from '../helpers/wait.js';
import { type ServeRig, startServe } from './helpers.js';

let rig: ServeRig | undefined;
let client: net.Socket | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  client?.destroy();
  client = undefined;
  await rig?.close();
  rig = undefined;
});

const line = (message: unknown): string => `${JSON.stringify(message)}\n`;
const hello =
  line({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'slow-writer', version: '1' },
    },
  }) + line({ jsonrpc: '2.0', method: 'notifications/initialized' });
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

  it('a line past the bound, newline included, is refused once and nothing after it is given', async () => {
    const overflow = vi.fn();
    const lines = lineSplitter({ maxBytes: 10, overflow });
    const got: string[] = [];
    lines.on('data', (b: Buffer) => got.push(b.toString()));
    lines.write(Buffer.from('123456789\n')); // 10 bytes: at the bound
    lines.write(Buffer.from('12345'));
    lines.write(Buffer.from('67890'));
    lines.write(Buffer.from('\nok\n'));
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual(['123456789\n']);
    expect(overflow).toHaveBeenCalledTimes(1);
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

  it('past the bound on stdio, the session ends as before', async () => {
    rig = await startServe();
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    stdout.resume();
    const served = rig.serve.serveStdio(stdin, stdout);
    stdin.write(hello);
    await dribble(stdin, bigPing(MAX_MESSAGE_BYTES), 256 * 1024);
    await served;
  });

  it("past the bound on the agent's socket, the connection is closed as before", async () => {
    rig = await startServe();
    await rig.serve.listen();
    client = (await connectToAgent(path.join(rig.dir, 'data')))!;
    client.on('error', () => undefined);
    client.resume();
    let closed = false;
    client.once('close', () => (closed = true));
    client.write(hello);
    await dribble(client, bigPing(MAX_MESSAGE_BYTES), 256 * 1024);
    await until(() => closed, 'the socket closed');
  });
});
