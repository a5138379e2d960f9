import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type ElicitResult,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureEntry, importConfig, ready, serverState } from '../services/mcp/helpers.js';
import { rebootService } from '../helpers/services.js';
import { nextEvent, until } from '../helpers/wait.js';
import { type ServeRig, startServe, textOf } from './helpers.js';

let rig: ServeRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

async function listAll(client: Client) {
  const tools = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

async function lastAudit(r: ServeRig) {
  const page = await r.agent.queryAudit({ order: 'desc', limit: 1 });
  return page.records[0]!;
}

describe('the agent as an MCP server (in process)', () => {
  it('lists every enabled service but the user-only ones, page by page, with titles and annotations from their risk', async () => {
    rig = await startServe({ services: [rebootService] }, { pageSize: 5 });
    const client = await rig.connect();
    const tools = await listAll(client);
    const names = tools.map((t) => t.name);
    const expected = rig.agent
      .toolEntries()
      .filter((t) => !t.userOnly)
      .map((t) => t.name);
    expect(names).toEqual(expected);
    expect(names).not.toContain('reboot_device');
    expect(names.length).toBeGreaterThan(5);

    const tool = (name: string) => tools.find((t) => t.name === name)!;
    expect(tool('get_current_time')).toMatchObject({
      title: 'Current time',
      annotations: { readOnlyHint: true, openWorldHint: false },
    });
    // Private: changes nothing, but carries the user's data out.
    expect(tool('read_file').annotations).toMatchObject({
      readOnlyHint: true,
      openWorldHint: true,
    });
    expect(tool('create_file').annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
    });
    expect(tool('create_file').inputSchema).toMatchObject({
      type: 'object',
      required: ['filename', 'content'],
    });
  });

  it('runs a call the policy allows and records it under the client as a connection, dialect mcp', async () => {
    rig = await startServe({ overrides: { policies: { create_file: 'allow' } } });
    const client = await rig.connect({ name: 'claude-ai', title: 'Claude Desktop' });
    const result = await client.callTool({
      name: 'create_file',
      arguments: { filename: 'hello.txt', content: 'hi' },
    });
    expect(result.isError).toBeFalsy();
    expect(await readFile(path.join(rig.dir, 'files', 'hello.txt'), 'utf8')).toBe('hi');
    expect(await lastAudit(rig)).toMatchObject({
      service: 'create_file',
      connection: 'Claude Desktop',
      connectionId: 'mcp:claude-ai',
      dialect: 'mcp',
      decision: 'auto',
      outcome: 'ok',
    });
  });

  it('a denied, an invalid and an unknown call: refusals as error results with the gate sentence; an unknown name as a protocol error', async () => {
    rig = await startServe({ overrides: { policies: { get_current_time: 'deny' } } });
    const client = await rig.connect();

    const denied = await client.callTool({ name: 'get_current_time', arguments: {} });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toMatch(/the user has blocked the service 'get_current_time'/);
    expect(await lastAudit(rig)).toMatchObject({ decision: 'denied', error: 'denied' });

    const invalid = await client.callTool({ name: 'create_file', arguments: { filename: 3 } });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(/invalid call to 'create_file'/);
    expect(await lastAudit(rig)).toMatchObject({ decision: 'invalid', error: 'invalid_params' });

    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/there is no service named 'no_such_tool'/),
    });
    expect(await lastAudit(rig)).toMatchObject({ service: 'no_such_tool', decision: 'invalid' });
  });

  it('tells the client its tool list changed when a service is switched off, and the list no longer has it', async () => {
    rig = await startServe();
    const client = await rig.connect();
    await listAll(client);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    await rig.agent.setServiceEnabled('get_current_time', false);
    await until(() => changed === 1, 'tools/list_changed');
    expect((await listAll(client)).map((t) => t.name)).not.toContain('get_current_time');
    const off = await client.callTool({ name: 'get_current_time', arguments: {} });
    expect(off.isError).toBe(true);
    expect(textOf(off)).toMatch(/switched off by the user/);
    // A policy change alters nothing a client sees: no notification.
    await rig.agent.setServicePolicy('create_file', 'allow');
    await new Promise((r) => setTimeout(r, 50));
    expect(changed).toBe(1);
  });

  it('with no window and no elicitation, a call that needs permission is refused, telling the user to open the app or set a policy', async () => {
    rig = await startServe();
    const client = await rig.connect();
    const result = await client.callTool({
      name: 'create_file',
      arguments: { filename: 'a.txt', content: 'x' },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/no one could be asked/);
    expect(textOf(result)).toMatch(/open Advent Agent to approve it, or to allow 'create_file'/);
    expect(existsSync(path.join(rig.dir, 'files', 'a.txt'))).toBe(false);
  });

  describe('elicitation (no window open)', () => {
    it('asks the client, naming the client, the service and the path; "once" runs it, and only "once" or "deny" is offered', async () => {
      rig = await startServe();
      const asked: { message: string; requestedSchema: unknown }[] = [];
      const client = await rig.connect({
        name: 'cursor',
        title: 'Cursor',
        elicit: async (req) => {
          asked.push(req);
          return { action: 'accept', content: { answer: 'once' } };
        },
      });
      const result = await client.callTool({
        name: 'create_file',
        arguments: { filename: 'notes/todo.txt', content: 'milk' },
      });
      expect(result.isError).toBeFalsy();
      expect(asked).toHaveLength(1);
      const { message, requestedSchema } = asked[0]!;
      expect(message).toContain('“Cursor”');
      expect(message).toContain('create_file');
      expect(message).toContain(path.join(rig.dir, 'files', 'notes', 'todo.txt'));
      const answer = (requestedSchema as { properties: { answer: { enum: string[] } } }).properties
        .answer;
      // The client's own UI answers: a grant outliving this call is not its to give.
      expect(answer.enum).toEqual(['once', 'deny']);
      expect(await lastAudit(rig)).toMatchObject({ decision: 'allowed-once', outcome: 'ok' });
    });

    it('"deny" or a declined form refuses; "once" allows that call only, and the next is asked again', async () => {
      rig = await startServe();
      const answers: ElicitResult[] = [
        { action: 'accept', content: { answer: 'deny' } },
        { action: 'decline' },
        { action: 'accept', content: { answer: 'once' } },
      ];
      let asked = 0;
      const client = await rig.connect({
        elicit: async () => answers[asked++] ?? { action: 'cancel' },
      });
      const call = (n: number) =>
        client.callTool({
          name: 'create_file',
          arguments: { filename: `f${n}.txt`, content: 'x' },
        });
      for (const n of [1, 2]) {
        const refused = await call(n);
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toMatch(/the user declined/);
      }
      expect((await call(3)).isError).toBeFalsy();
      expect(await lastAudit(rig)).toMatchObject({ decision: 'allowed-once', outcome: 'ok' });
      // Nothing was remembered: the fourth call is asked (and, unanswered, refused).
      const fourth = await call(4);
      expect(fourth.isError).toBe(true);
      expect(asked).toBe(4);
      expect(existsSync(path.join(rig.dir, 'files', 'f4.txt'))).toBe(false);
    });

    it('a client answering its own question "session" gets no grant, for itself or any other connection', async () => {
      rig = await startServe();
      const evil = await rig.connect({
        name: 'self-approver',
        elicit: async () => ({ action: 'accept', content: { answer: 'session' } }),
      });
      // "session" is not among the choices offered, so it is no answer: not run, nothing remembered.
      const first = await evil.callTool({
        name: 'create_file',
        arguments: { filename: 'one.txt', content: 'x' },
      });
      expect(first.isError).toBe(true);
      expect(existsSync(path.join(rig.dir, 'files', 'one.txt'))).toBe(false);
      // A second client that cannot ask anyone: with no window open it must still be refused.
      const other = await rig.connect({ name: 'bystander' });
      const second = await other.callTool({
        name: 'create_file',
        arguments: { filename: 'two.txt', content: 'x' },
      });
      expect(second.isError).toBe(true);
      expect(textOf(second)).toMatch(/no one could be asked/);
      expect(existsSync(path.join(rig.dir, 'files', 'two.txt'))).toBe(false);
      expect(await lastAudit(rig)).toMatchObject({ service: 'create_file', decision: 'denied' });
    });

    it('no answer before the prompt times out is a no', async () => {
      rig = await startServe({ overrides: { promptTimeoutSec: 0.3 } });
      const client = await rig.connect({
        elicit: () => new Promise<ElicitResult>(() => undefined),
      });
      const result = await client.callTool({
        name: 'create_file',
        arguments: { filename: 'late.txt', content: 'x' },
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/did not answer the permission request/);
      expect(await lastAudit(rig)).toMatchObject({ decision: 'timeout', error: 'prompt_timeout' });
      expect(existsSync(path.join(rig.dir, 'files', 'late.txt'))).toBe(false);
    });

    it('with a window open, the window asks and the client is not', async () => {
      rig = await startServe();
      rig.agent.broker.attach({ name: 'window' });
      let asked = 0;
      const client = await rig.connect({
        elicit: async () => {
          asked += 1;
          return { action: 'accept', content: { answer: 'once' } };
        },
      });
      const prompt = nextEvent(rig.agent.events, 'prompt');
      const call = client.callTool({
        name: 'create_file',
        arguments: { filename: 'w.txt', content: 'x' },
      });
      const p = await prompt;
      expect(p.connection).toEqual({ id: 'mcp:test-client', name: 'test-client' });
      rig.agent.answerPrompt(p.id, 'once');
      expect((await call).isError).toBeFalsy();
      expect(asked).toBe(0);
    });
  });

  it('a client withdrawing a call (notifications/cancelled) withdraws its waiting prompt, recorded as cancelled', async () => {
    rig = await startServe();
    rig.agent.broker.attach({ name: 'window' });
    const client = await rig.connect();
    const prompt = nextEvent(rig.agent.events, 'prompt');
    const controller = new AbortController();
    const call = client.callTool(
      { name: 'create_file', arguments: { filename: 'c.txt', content: 'x' } },
      undefined,
      { signal: controller.signal },
    );
    call.catch(() => undefined);
    const p = await prompt;
    const resolved = nextEvent(rig.agent.events, 'promptResolved', (e) => e.id === p.id);
    controller.abort('changed my mind');
    expect(await resolved).toEqual({ id: p.id, resolution: 'withdrawn' });
    await expect(call).rejects.toThrow();
    await until(() => rig!.agent.broker.pending().length === 0, 'no pending prompt');
    await rig.agent.gate.drain();
    expect(await lastAudit(rig)).toMatchObject({
      service: 'create_file',
      decision: 'withdrawn',
      outcome: 'cancelled',
      error: 'cancelled',
    });
  });

  it('holds at most 32 calls of one client at once; the next is refused until some end', async () => {
    // Calls held open by their questions: more may wait here than the gate lets a server have.
    rig = await startServe({ overrides: { maxWaitingPrompts: 64 } });
    rig.agent.broker.attach({ name: 'window' });
    const client = await rig.connect();
    const calls = Array.from({ length: 32 }, (_, n) =>
      client.callTool({ name: 'create_file', arguments: { filename: `m${n}.txt`, content: 'x' } }),
    );
    await until(() => rig!.agent.broker.pending().length === 32, '32 prompts');
    const extra = await client.callTool({ name: 'get_current_time', arguments: {} });
    expect(extra.isError).toBe(true);
    expect(textOf(extra)).toMatch(/too many calls at once/);
    for (const p of rig.agent.broker.pending()) rig.agent.answerPrompt(p.id, 'deny');
    await Promise.all(calls);
    expect(
      (await client.callTool({ name: 'get_current_time', arguments: {} })).isError,
    ).toBeFalsy();
  });

  it("an imported tool is listed with its server's own hints and output schema, and returns structured content", async () => {
    rig = await startServe({ mcp: { timing: { initializeTimeoutMs: 10_000 } } });
    await importConfig(rig.agent, rig.dir, { fixture: fixtureEntry() });
    await serverState(rig.agent, 'fixture', ready);
    await rig.agent.setServicePolicy('fixture_structured', 'allow');
    const client = await rig.connect();
    const tools = await listAll(client);
    expect(tools.find((t) => t.name === 'fixture_echo')!.annotations).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
      openWorldHint: false,
    });
    const structured = tools.find((t) => t.name === 'fixture_structured')!;
    expect(structured.outputSchema).toMatchObject({ type: 'object', required: ['temperature'] });
    // The SDK client checks structuredContent against the declared schema.
    const result = await client.callTool({
      name: 'fixture_structured',
      arguments: { city: 'Oslo' },
    });
    expect(result.structuredContent).toEqual({ temperature: 21.5, city: 'Oslo' });
  });
});
