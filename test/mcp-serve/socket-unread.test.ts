/**
 * A client of the agent's socket that sends requests and does not read the answers (DESIGN §1.7):
 * the agent stops reading it instead of holding every answer, and cuts it off past a bound.
 */
import type net from 'node:net';
import { PassThrough } from 'node:stream';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_UNREAD_ANSWER_BYTES } from '../../app/mcp-serve/limits.js';
import { connectToAgent } from '../../app/mcp-serve/relay.js';
import type { Service } from '../../app/services/service.js';
import { until } from '../helpers/wait.js';
import { type ServeRig, startServe, helloLines, line } from './helpers.js';

let rig: ServeRig | undefined;
let client: net.Socket | undefined;
afterEach(async () => {
  client?.destroy();
  client = undefined;
  await rig?.close();
  rig = undefined;
});

const hello = helloLines('no-reader', 0);
const toolsList = (id: number): string => line({ jsonrpc: '2.0', id, method: 'tools/list' });

/** An agent listening on its socket, its log lines collected; a client connected, token sent. */
async function listening(...args: Parameters<typeof startServe>) {
  const logs: string[] = [];
  const [agentOptions, serveOptions] = args;
  rig = await startServe(agentOptions, {
    ...serveOptions,
    log: (_level, message) => logs.push(message),
  });
  await rig.serve.listen();
  client = (await connectToAgent(path.join(rig.dir, 'data')))!;
  client.on('error', () => undefined);
  return { logs, client };
}

/** Services with long descriptions: one `tools/list` answer is then about a third of a megabyte. */
function wordyServices(count: number): Service[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `wordy_${i}`,
    title: `Wordy ${i}`,
    description: `A service that says a lot. ${'blah '.repeat(200)}`,
    parameters: { type: 'object', properties: {} },
    risk: 'read' as const,
    timeoutMs: 1000,
    run: async () => 'ok',
  }));
}

describe('a socket client that does not read its answers', () => {
  it('is not read either until it catches up, and then gets every answer', async () => {
    // One tool per page: a small answer per request, so only the pause can stop the backlog.
    const { logs, client } = await listening({}, { pageSize: 1 });
    const count = 4000;
    let requests = hello;
    for (let id = 1; id <= count; id++) requests += toolsList(id);
    client.write(requests);
    // The client reads nothing; past ~1 MB of answers waiting, the agent stops reading it.
    await until(() => logs.some((m) => /slow to read its answers/.test(m)), 'reading paused');

    const answered = new Set<number>();
    let rest = '';
    client.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop()!;
      for (const l of lines) answered.add((JSON.parse(l) as { id: number }).id);
    });
    await until(() => answered.size === count + 1, 'every answer', 15_000);
    expect(answered.has(count)).toBe(true);
    expect(logs.some((m) => /cut off/.test(m))).toBe(false);
    expect(client.destroyed).toBe(false);
  });

  it(`is cut off, with a line in the log, once ${MAX_UNREAD_ANSWER_BYTES / 2 ** 20} MB of answers wait for it`, async () => {
    const { logs, client } = await listening({ services: wordyServices(300) }, { pageSize: 1000 });
    // ~3 KB of requests asking for ~20 MB of answers, none of which the client reads.
    let requests = hello;
    for (let id = 1; id <= 60; id++) requests += toolsList(id);
    client.write(requests);
    await until(() => logs.some((m) => /cut off/.test(m)), 'the client cut off');
    expect(logs.filter((m) => /cut off/.test(m))).toEqual([
      expect.stringMatching(/answers waited for it to read them/),
    ]);
    // Reading now, the client finds its connection ended short of the answers it asked for.
    let received = 0;
    client.on('data', (chunk: Buffer) => (received += chunk.length));
    await new Promise<void>((resolve) => client.once('close', () => resolve()));
    expect(received).toBeLessThan(MAX_UNREAD_ANSWER_BYTES);
  });
});

describe('a stdio client that does not read its answers', () => {
  it('is cut off too, instead of the pipe queueing its answers without end', async () => {
    const logs: string[] = [];
    const words: unknown[] = [];
    rig = await startServe(
      { services: wordyServices(300) },
      {
        pageSize: 1000,
        log: (_level, message, said) => {
          logs.push(message);
          if (said) words.push(said);
        },
      },
    );
    const stdin = new PassThrough();
    const stdout = new PassThrough(); // nobody reads it: what is written stays queued
    const served = rig.serve.serveStdio(stdin, stdout);
    let requests = hello;
    for (let id = 1; id <= 60; id++) requests += toolsList(id);
    stdin.write(requests);
    await until(() => logs.some((m) => /cut off/.test(m)), 'the client cut off');
    await served; // the session ended
    expect(stdout.writableLength).toBeLessThan(MAX_UNREAD_ANSWER_BYTES + 2 * 2 ** 20);
    // The warning also comes in words a window translates.
    expect(words).toEqual([
      { key: 'notice.mcpClientCutOff', params: { bytes: expect.any(Number) } },
    ]);
  });
});
