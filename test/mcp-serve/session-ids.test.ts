/**
 * Calls by request id: a client reusing the id of a call still in flight, and a session ending
 * while calls wait at the window's prompt. Raw JSON-RPC over the SDK's in-memory transport (the
 * SDK's Client never reuses an id).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpSession } from '../../app/mcp-serve/session.js';
import { nextEvent, until } from '../helpers/wait.js';
import { type ServeRig, initializeRequest, startServe, textOf } from './helpers.js';

let rig: ServeRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

type Answer = { id?: RequestId; result?: unknown; error?: { code: number; message: string } };

/** A client speaking raw JSON-RPC to `rig`'s agent, initialised. */
async function rawClient(connect: (serverSide: InMemoryTransport) => Promise<void> | void) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await connect(serverSide);
  const got: Answer[] = [];
  clientSide.onmessage = (m) => void got.push(m as Answer);
  await clientSide.start();
  const send = (m: Record<string, unknown>) =>
    clientSide.send({ jsonrpc: '2.0', ...m } as JSONRPCMessage);
  await send(initializeRequest('raw', 0));
  await until(() => got.some((m) => m.id === 0), 'initialize answered');
  await send({ method: 'notifications/initialized' });
  const answers = (id: RequestId) => got.filter((m) => m.id === id);
  const call = (id: RequestId, filename: string) =>
    send({
      id,
      method: 'tools/call',
      params: { name: 'create_file', arguments: { filename, content: 'x' } },
    });
  return { got, send, call, answers, close: () => clientSide.close() };
}

const fileIn = (r: ServeRig, name: string) => existsSync(path.join(r.dir, 'files', name));

describe('calls by request id', () => {
  it('a call reusing the id of one in flight is a protocol error, and the one in flight is withdrawn: neither can run', async () => {
    rig = await startServe();
    rig.agent.broker.attach({ name: 'window' });
    const client = await rawClient((t) => void rig!.serve.serve(t));

    const prompt = nextEvent(rig.agent.events, 'prompt');
    await client.call(7, 'first.txt');
    const first = await prompt;
    const withdrawn = nextEvent(rig.agent.events, 'promptResolved', (e) => e.id === first.id);
    await client.call(7, 'second.txt');

    expect(await withdrawn).toEqual({ id: first.id, resolution: 'withdrawn' });
    await until(() => client.answers(7).length === 2, 'both calls answered');
    const [refused, firstAnswer] = client.answers(7);
    expect(refused!.error).toMatchObject({
      code: -32600,
      message: expect.stringMatching(/request id 7 is already in use by a call in flight/),
    });
    expect(firstAnswer!.result).toMatchObject({ isError: true });
    expect(textOf(firstAnswer!.result)).toMatch(/another call came with the same request id/);
    // The second never reached the window; nothing is left for a late "Allow".
    expect(rig.agent.broker.pending()).toEqual([]);
    await rig.agent.gate.drain();
    expect(fileIn(rig, 'first.txt') || fileIn(rig, 'second.txt')).toBe(false);
    const audit = await rig.agent.queryAudit({ service: 'create_file' });
    expect(audit.records).toHaveLength(1);
    expect(audit.records[0]).toMatchObject({ decision: 'withdrawn', outcome: 'cancelled' });

    // An id is free again once its call has ended; 7 and "7" are two ids.
    const again = nextEvent(rig.agent.events, 'prompt');
    await client.call(7, 'third.txt');
    const third = await again;
    const another = nextEvent(rig.agent.events, 'prompt');
    await client.call('7', 'fourth.txt');
    const fourth = await another;
    rig.agent.answerPrompt(third.id, 'once');
    rig.agent.answerPrompt(fourth.id, 'once');
    await until(() => client.answers('7').length === 1, 'the call "7" answered');
    await until(() => client.answers(7).length === 3, 'the call 7 answered');
    expect(client.answers(7)[2]!.result).not.toMatchObject({ isError: true });
    expect(client.answers('7')[0]!.result).not.toMatchObject({ isError: true });
    expect(fileIn(rig, 'third.txt') && fileIn(rig, 'fourth.txt')).toBe(true);
  });

  it('the client going away withdraws every call it has waiting; a late "Allow" runs nothing', async () => {
    rig = await startServe();
    rig.agent.broker.attach({ name: 'window' });
    const client = await rawClient((t) => void rig!.serve.serve(t));
    await client.call(1, 'a.txt');
    await client.call(2, 'b.txt');
    await until(() => rig!.agent.broker.pending().length === 2, 'two prompts');
    const waiting = rig.agent.broker.pending();
    await client.close();
    await until(() => rig!.agent.broker.pending().length === 0, 'every prompt withdrawn');
    for (const p of waiting) rig.agent.answerPrompt(p.id, 'once');
    await rig.agent.gate.drain();
    expect(fileIn(rig, 'a.txt') || fileIn(rig, 'b.txt')).toBe(false);
  });

  it("ending a session withdraws its calls through a signal of its own, not the SDK's table of handlers by id", async () => {
    rig = await startServe();
    const agent = rig.agent;
    agent.broker.attach({ name: 'window' });
    const session = createMcpSession({
      gate: agent.gate,
      tools: () => agent.toolEntries(),
      onToolsChanged: () => ({ dispose: () => undefined }),
      serverInfo: { name: 'advent-agent', version: '0' },
      clock: agent.clockSource,
      language: () => 'en',
    });
    const client = await rawClient((t) => session.server.connect(t));
    await client.call(1, 'a.txt');
    await until(() => agent.broker.pending().length === 1, 'the prompt');
    // What the SDK forgets of a handler (a later request with its id takes its place there)
    // must not keep the call alive once its session is over.
    (
      session.server as unknown as { _requestHandlerAbortControllers: Map<unknown, unknown> }
    )._requestHandlerAbortControllers.clear();
    session.dispose();
    await until(() => agent.broker.pending().length === 0, 'the prompt withdrawn');
    await agent.gate.drain();
    expect(fileIn(rig, 'a.txt')).toBe(false);
  });
});
