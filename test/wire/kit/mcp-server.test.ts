import { afterEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../../app/agent.js';
import type { Policy } from '../../../app/contract/policy.js';
import type { Service } from '../../../app/services/service.js';
import { classify } from '../../../app/wire/kit/jsonrpc.js';
import {
  type Listing,
  type McpLog,
  type McpServerOptions,
  McpToolServer,
  cutText,
} from '../../../app/wire/kit/mcp-server.js';
import { rebootService } from '../../helpers/services.js';
import { type TempAgent, openTempAgent } from '../../helpers/ws-agent.js';
import { BUILTIN_NAMES } from '../../helpers/builtins.js';

/** 60 services with long descriptions (multi-byte text: pages are counted in bytes). */
const many: Service[] = Array.from({ length: 60 }, (_, i) => ({
  name: `svc_${String(i).padStart(2, '0')}`,
  title: `Service ${i}`,
  description: `Service number ${i}. ` + '查询天气和时间 weather and time lookups. '.repeat(12),
  parameters: {
    type: 'object',
    properties: { q: { type: 'string', description: 'what to look up' } },
  },
  risk: 'read',
  timeoutMs: 1000,
  run: async () => `svc ${i} ran`,
}));

const bigText: Service = {
  name: 'big_text',
  title: 'Big text',
  description: 'Returns a long text.',
  parameters: { type: 'object', properties: {} },
  risk: 'read',
  timeoutMs: 1000,
  // 3-byte characters, so a byte cut lands inside one unless it is careful.
  run: async () => 'A' + '汉'.repeat(10_000),
};

let temp: TempAgent | undefined;
let agent: Agent;

async function open(services: Service[] = [], policies: Record<string, Policy> = {}) {
  temp = await openTempAgent('advent-mcp-server-', { services, overrides: { policies } });
  agent = temp.agent;
  return agent;
}

function server(opts: Partial<McpServerOptions> = {}): McpToolServer {
  return new McpToolServer({
    connection: { id: 'p-test', name: 'Test endpoint' },
    dialect: 'endpoint',
    gate: agent.gate,
    tools: () => agent.toolEntries(),
    serverInfo: { name: 'advent-agent', version: '9.9.9' },
    listChanged: true,
    ...opts,
  });
}

type Reply = {
  jsonrpc: string;
  id: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

async function ask(s: McpToolServer, msg: unknown, logs: McpLog[] = []): Promise<Reply> {
  const reply = await s.handle(classify(msg), (l) => logs.push(l));
  if (!reply) throw new Error('no reply');
  return reply as Reply;
}

const call = (id: number | string, name: string, args: unknown = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

afterEach(async () => {
  await temp?.close();
  temp = undefined;
});

describe('McpToolServer: initialize and ping', () => {
  it('answers with a protocol version the client asked for when it knows it, else 2024-11-05', async () => {
    await open();
    const s = server();
    const asked = async (protocolVersion?: string) =>
      (await ask(s, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion } }))
        .result!.protocolVersion;
    expect(await asked('2025-03-26')).toBe('2025-03-26');
    expect(await asked('2024-11-05')).toBe('2024-11-05');
    expect(await asked('1999-01-01')).toBe('2024-11-05');
    expect(await asked(undefined)).toBe('2024-11-05');
  });

  it('announces tools (with listChanged only where the dialect sends it) and who we are', async () => {
    await open();
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} };
    expect((await ask(server(), init)).result).toEqual({
      protocolVersion: '2024-11-05',
      capabilities: { tools: { listChanged: true } },
      serverInfo: { name: 'advent-agent', version: '9.9.9' },
    });
    expect((await ask(server({ listChanged: false }), init)).result!.capabilities).toEqual({
      tools: {},
    });
  });

  it('keeps the camera upload address from capabilities.vision, and forgets it on a new initialize', async () => {
    await open();
    const s = server();
    await ask(s, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { capabilities: { vision: { url: 'http://h/vision', token: 'v-tok' } } },
    });
    expect(s.vision).toEqual({ url: 'http://h/vision', token: 'v-tok' });
    await ask(s, { jsonrpc: '2.0', id: 2, method: 'initialize', params: {} });
    expect(s.vision).toBeUndefined();
  });

  it('answers ping with an empty result and marks notifications/initialized without replying', async () => {
    await open();
    const s = server();
    expect(await ask(s, { jsonrpc: '2.0', id: 5, method: 'ping' })).toEqual({
      jsonrpc: '2.0',
      id: 5,
      result: {},
    });
    expect(await s.handle(classify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).toBe(
      undefined,
    );
    expect(s.initialized).toBe(true);
  });

  it('answers a notification sent with an id (some servers do) instead of calling it unknown', async () => {
    await open();
    const s = server();
    const r = await ask(s, { jsonrpc: '2.0', id: 3, method: 'notifications/initialized' });
    expect(r).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    expect(s.initialized).toBe(true);
  });

  it('says which method it does not support (-32601)', async () => {
    await open();
    const r = await ask(server(), { jsonrpc: '2.0', id: 9, method: 'resources/list' });
    expect(r.error).toEqual({ code: -32601, message: "method 'resources/list' is not supported" });
  });
});

describe('McpToolServer: tools/list', () => {
  it('pages under 8000 bytes, every tool exactly once, nextCursor naming the first tool not sent', async () => {
    await open(many);
    const s = server();
    const all = agent.toolEntries().map((t) => t.name);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const reply = await ask(s, {
        jsonrpc: '2.0',
        id: 100 + pages,
        method: 'tools/list',
        params: cursor === undefined ? {} : { cursor },
      });
      pages += 1;
      expect(Buffer.byteLength(JSON.stringify(reply))).toBeLessThanOrEqual(8000);
      const result = reply.result as { tools: { name: string }[]; nextCursor?: string };
      expect(result.tools.length).toBeGreaterThan(0);
      seen.push(...result.tools.map((t) => t.name));
      if (result.nextCursor === undefined) break;
      // The cursor is the name of the first tool of the next page.
      expect(all[seen.length]).toBe(result.nextCursor);
      // And the page is full: with that tool too, it would be over the bound.
      const listed = agent.toolEntries();
      const fuller = {
        ...reply,
        result: {
          tools: [
            ...result.tools,
            (({ name, description, inputSchema }) => ({ name, description, inputSchema }))(
              listed[seen.length]!,
            ),
          ],
          nextCursor: listed[seen.length + 1]?.name,
        },
      };
      expect(Buffer.byteLength(JSON.stringify(fuller))).toBeGreaterThan(8000);
      cursor = result.nextCursor;
    }
    expect(pages).toBeGreaterThan(3);
    expect(seen).toEqual(all);
    expect(all).toHaveLength(many.length + BUILTIN_NAMES.length);
  });

  it('treats an empty cursor as the first page, and an unknown cursor as invalid params (-32602)', async () => {
    await open(many);
    const s = server();
    const first = await ask(s, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const empty = await ask(s, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { cursor: '', withUserTools: false },
    });
    expect(empty).toEqual(first);
    const bad = await ask(s, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/list',
      params: { cursor: 'svc_gone' },
    });
    expect(bad.error?.code).toBe(-32602);
    expect(bad.error?.message).toMatch(/unknown cursor 'svc_gone'.*list again from the start/);
  });

  it('lists user-only services only for withUserTools, marked for the user', async () => {
    await open([rebootService]);
    const s = server();
    type Tool = { name: string; annotations?: unknown; inputSchema: unknown };
    // Every page: the built-ins alone are more than one 8000-byte page.
    const list = async (params: Record<string, unknown>) => {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = (
          await ask(s, {
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/list',
            params: cursor === undefined ? params : { ...params, cursor },
          })
        ).result as { tools: Tool[]; nextCursor?: string };
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return tools;
    };
    expect((await list({})).map((t) => t.name)).toEqual(BUILTIN_NAMES);
    const withUser = await list({ withUserTools: true });
    expect(withUser.map((t) => t.name)).toEqual([...BUILTIN_NAMES, 'reboot_device']);
    expect(withUser.at(-1)!.annotations).toEqual({ audience: ['user'] });
    expect(withUser[0]).not.toHaveProperty('annotations');
    expect(withUser.find((t) => t.name === 'create_file')!.inputSchema).toMatchObject({
      type: 'object',
      required: ['filename', 'content'],
    });
  });
});

describe('McpToolServer: tools/call through the gate', () => {
  it('returns a service result as text content', async () => {
    await open(many);
    const r = await ask(server(), call(1, 'svc_03', { q: 'x' }));
    expect(r.result).toEqual({ content: [{ type: 'text', text: 'svc 3 ran' }], isError: false });
    const audit = await agent.queryAudit({ service: 'svc_03' });
    expect(audit.records[0]).toMatchObject({
      connection: 'Test endpoint',
      dialect: 'endpoint',
      callId: '1',
      decision: 'auto',
      outcome: 'ok',
    });
  });

  it('returns a refusal as an isError result whose text (and error) tells the model why', async () => {
    await open(many, { svc_01: 'deny' });
    const r = await ask(server(), call(2, 'svc_01'));
    const text = (r.result!.content as { text: string }[])[0]!.text;
    expect(r.result!.isError).toBe(true);
    expect(text).toMatch(/the user has blocked the service 'svc_01'; do not retry/);
    expect(r.result!.error).toBe(text);
    expect(r.error).toBeUndefined();
  });

  it('answers an unknown tool with -32601 and bad arguments with -32602', async () => {
    await open();
    const s = server();
    const unknown = await ask(s, call(3, 'launch_rockets'));
    expect(unknown.error).toMatchObject({ code: -32601 });
    expect(unknown.error!.message).toMatch(
      /no service named 'launch_rockets'; available services:/,
    );
    const invalid = await ask(s, call(4, 'create_file', { filename: 42 }));
    expect(invalid.error).toMatchObject({ code: -32602 });
    expect(invalid.error!.message).toMatch(/invalid call to 'create_file'/);
    const noName = await ask(s, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: {} });
    expect(noName.error).toMatchObject({ code: -32602 });
    const notObject = await ask(s, call(6, 'get_current_time', 'now'));
    expect(notObject.error).toMatchObject({ code: -32602 });
  });

  it('replies with the id exactly as sent: a number stays a number, a string stays a string', async () => {
    await open();
    const s = server();
    for (const id of [7, '7', 0, 'req-α'] as const) {
      expect((await ask(s, { jsonrpc: '2.0', id, method: 'ping' })).id).toBe(id);
      expect((await ask(s, call(id, 'get_current_time'))).id).toBe(id);
      expect((await ask(s, call(id, 'nope'))).id).toBe(id);
    }
  });

  it('never answers a notification, and does not run a tools/call that has no id', async () => {
    await open(many);
    const logs: McpLog[] = [];
    const s = server();
    const reply = await s.handle(
      classify({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'svc_00', arguments: {} } }),
      (l) => logs.push(l),
    );
    expect(reply).toBeUndefined();
    expect(logs).toEqual([
      { level: 'warn', message: expect.stringMatching(/without an id was ignored/) },
    ]);
    expect((await agent.queryAudit({ service: 'svc_00' })).records).toEqual([]);
    expect(await s.handle(classify({ jsonrpc: '2.0', method: 'notifications/cancelled' }))).toBe(
      undefined,
    );
  });

  it('cuts a long result to 8 KB at a character boundary and says it was cut', async () => {
    await open([bigText]);
    const r = await ask(server(), call(1, 'big_text'));
    const text = (r.result!.content as { text: string }[])[0]!.text;
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(8000);
    expect(text).toMatch(/\n…\[cut: the result was 30001 bytes; only the first part is shown\]$/);
    const body = text.slice(0, text.indexOf('\n…[cut'));
    expect(body).toMatch(/^A汉+$/);
    expect(body).not.toContain('\uFFFD');
  });

  it('lets a server that listed user tools call one, still only after the user agrees', async () => {
    await open([rebootService]);
    agent.broker.attach({ name: 'test' });
    const asked: string[] = [];
    agent.events.on('prompt', (p) => {
      asked.push(p.service);
      agent.answerPrompt(p.id, 'once');
    });
    const s = server();
    await ask(s, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { withUserTools: true } });
    const r = await ask(s, call(2, 'reboot_device'));
    expect(r.result).toMatchObject({ isError: false, content: [{ text: 'rebooting' }] });
    expect(asked).toEqual(['reboot_device']);
    expect((await agent.queryAudit({ service: 'reboot_device' })).records[0]).toMatchObject({
      decision: 'allowed-once',
    });
  });

  it('does not let a server that never asked for user tools call one', async () => {
    await open([rebootService]);
    agent.broker.attach({ name: 'test' });
    let prompts = 0;
    agent.events.on('prompt', (p) => {
      prompts += 1;
      agent.answerPrompt(p.id, 'once');
    });
    const r = await ask(server(), call(2, 'reboot_device'));
    expect(r.error).toMatchObject({ code: -32601 });
    expect(prompts).toBe(0);
  });

  it('turns a failure inside the agent into -32603, never an exception', async () => {
    await open();
    const s = server({
      tools: () => {
        throw new Error('registry unavailable');
      },
    });
    const r = await ask(s, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(r.error).toEqual({ code: -32603, message: 'internal error: registry unavailable' });
  });

  it('answers a malformed request that has an id with -32600, and ignores stray responses', async () => {
    await open();
    const logs: McpLog[] = [];
    const s = server();
    expect(await ask(s, { jsonrpc: '2.0', id: 4 }, logs)).toMatchObject({
      id: 4,
      error: { code: -32600 },
    });
    expect(
      await s.handle(classify({ jsonrpc: '2.0', id: 5, result: {} }), (l) => logs.push(l)),
    ).toBe(undefined);
    expect(logs.map((l) => l.level)).toEqual(['warn', 'info']);
  });
});

describe('cutText', () => {
  it('leaves text within the limit alone', () => {
    expect(cutText('héllo', 6)).toBe('héllo');
  });

  it('never splits a 4-byte character', () => {
    const text = '😀'.repeat(100); // 400 bytes
    for (let max = 90; max < 110; max++) {
      const cut = cutText(text, max);
      expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(max);
      expect(cut.split('\n…')[0]).toMatch(/^(😀)*$/u);
    }
  });
});

describe('McpToolServer: what the server has seen (registration, in one place)', () => {
  /** Walk every page through `serve`, as a dialect does; returns what reached the "socket". */
  async function walk(s: McpToolServer, reply: (r: Record<string, unknown>) => boolean) {
    let cursor: string | undefined;
    for (let id = 1; ; id++) {
      let page: Record<string, unknown> | undefined;
      await s.serve(
        classify({
          jsonrpc: '2.0',
          id,
          method: 'tools/list',
          params: cursor === undefined ? {} : { cursor },
        }),
        (r) => {
          page = r;
          return reply(r);
        },
      );
      cursor = (page?.result as { nextCursor?: string } | undefined)?.nextCursor;
      if (cursor === undefined) return;
    }
  }

  it('is registered once a walk through every page has gone out, with every name it carried', async () => {
    await open(many);
    const listings: Listing[] = [];
    const s = server({ onListing: (l) => listings.push(l) });
    await walk(s, () => true);
    expect(listings).toEqual([{ ok: true, services: agent.toolEntries().map((t) => t.name) }]);
  });

  it('counts nothing the socket could not carry: an answer that was not sent registers nothing', async () => {
    await open(many);
    const listings: Listing[] = [];
    const logs: McpLog[] = [];
    const s = server({ onListing: (l) => listings.push(l) });
    await s.serve(
      classify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      () => false,
      (l) => logs.push(l),
    );
    expect(listings).toEqual([]);
    expect(logs.map((l) => l.message)).toEqual([
      "the answer to 'tools/list' (id 1) was not sent: the connection it came on is gone",
    ]);
  });

  it('does not count a walk begun before the set changed; the next full walk counts', async () => {
    await open(many);
    const listings: Listing[] = [];
    const s = server({ onListing: (l) => listings.push(l) });
    const first = await ask(s, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    await s.serve(
      classify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      () => true,
    );
    s.restartWalk();
    // The rest of the old walk goes out, but cannot show the whole (changed) set.
    let cursor = (first.result as { nextCursor?: string }).nextCursor;
    for (let id = 2; cursor !== undefined; id++) {
      let page: Record<string, unknown> | undefined;
      await s.serve(
        classify({ jsonrpc: '2.0', id, method: 'tools/list', params: { cursor } }),
        (r) => ((page = r), true),
      );
      cursor = (page?.result as { nextCursor?: string }).nextCursor;
    }
    expect(listings).toEqual([]);
    await walk(s, () => true);
    expect(listings).toHaveLength(1);
  });

  it('reports a listing the server could not get as a failure, with the reason', async () => {
    await open(many);
    const listings: Listing[] = [];
    const s = server({ onListing: (l) => listings.push(l) });
    await s.serve(
      classify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: 'svc_gone' } }),
      () => true,
    );
    expect(listings).toEqual([
      {
        ok: false,
        message: expect.stringMatching(/could not list the services: unknown cursor 'svc_gone'/),
      },
    ]);
  });
});

describe('McpToolServer: bounds', () => {
  it('cuts a tool name of megabytes before the gate sees it, and answers -32601', async () => {
    await open();
    const huge = 'n'.repeat(3 * 1024 * 1024);
    const r = await ask(server(), call(1, huge));
    expect(r.error?.code).toBe(-32601);
    expect(r.error!.message.length).toBeLessThan(2000);
    const audit = await agent.queryAudit({});
    expect(audit.records).toHaveLength(1);
    expect(audit.records[0]!.service.length).toBeLessThanOrEqual(300);
  });

  it('refuses a method name or an id longer than any real one (-32600), keeping neither', async () => {
    await open();
    const s = server();
    const longMethod = await ask(s, { jsonrpc: '2.0', id: 1, method: 'x'.repeat(100_000) });
    expect(longMethod.error).toEqual({
      code: -32600,
      message: 'a method name of 100000 characters is not accepted (at most 256)',
    });
    const logs: McpLog[] = [];
    const longId = await s.handle(
      classify({ jsonrpc: '2.0', id: 'i'.repeat(100_000), method: 'ping' }),
      (l) => logs.push(l),
    );
    expect(longId).toBeUndefined();
    expect(logs[0]!.message).toMatch(/an id of 100000 characters is not accepted/);
  });
});

describe('McpToolServer: notifications/cancelled', () => {
  it('withdraws the named call (a numeric id named as a string too): no response, nothing run', async () => {
    let runs = 0;
    const write: Service = {
      name: 'write_it',
      title: 'Write it',
      description: 'Writes.',
      parameters: { type: 'object', properties: {} },
      risk: 'write',
      timeoutMs: 1000,
      run: async () => ++runs,
    };
    await open([write]);
    const detach = agent.broker.attach({ name: 'test' });
    const prompted = new Promise<void>((resolve) => agent.broker.on('prompt', () => resolve()));
    const s = server();
    const sent: Record<string, unknown>[] = [];
    const serving = s.serve(
      classify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'write_it' } }),
      (r) => sent.push(r) > 0,
    );
    await prompted;
    // An unknown id is ignored, as the spec says.
    await s.serve(
      classify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 8 } }),
      (r) => sent.push(r) > 0,
    );
    expect(agent.broker.pending()).toHaveLength(1);
    await s.serve(
      classify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: '7', reason: 'timed out' },
      }),
      (r) => sent.push(r) > 0,
    );
    await serving;
    expect(sent).toEqual([]);
    expect(runs).toBe(0);
    expect(agent.broker.pending()).toEqual([]);
    const [record] = (await agent.queryAudit({ service: 'write_it' })).records;
    expect(record).toMatchObject({ decision: 'withdrawn', outcome: 'cancelled' });
    expect(record?.message).toMatch(/the server cancelled it: timed out/);
    detach();
  });
});
