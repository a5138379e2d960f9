import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../app/clock.js';
import { pieces } from '../../sim/advent/demo.js';
import { FrameType } from '../../app/wire/advent/frame.js';
import { useSim } from './fixture.js';
import { type RawClient, textOf } from './raw-client.js';
import { startHarness, type Harness } from '../helpers/agent-harness.js';
import { nextEvent } from '../helpers/wait.js';

const SERVICES = {
  get_current_time: {
    description: 'Get the current time',
    parameters: { type: 'object', properties: { format: { type: 'string' } } },
  },
  create_file: {
    description: 'Create a file',
    parameters: {
      type: 'object',
      properties: { filename: { type: 'string' }, content: { type: 'string' } },
      required: ['filename', 'content'],
    },
  },
};

type Call = {
  type: 'call';
  data: { call_id: string; method: string; params: Record<string, string> };
};

async function nextCall(c: RawClient): Promise<Call['data']> {
  const seen = c.frames.filter((f) => f.type === FrameType.MCP).length;
  await c.waitFrame(() => c.frames.filter((f) => f.type === FrameType.MCP).length > seen);
  const frame = c.frames.filter((f) => f.type === FrameType.MCP)[seen]!;
  return (JSON.parse(frame.payload.toString()) as Call).data;
}

describe('the demo conversation', () => {
  const { start, client } = useSim();

  async function ready(register = true): Promise<RawClient> {
    const at = new Date(2025, 0, 22, 14, 30, 25).getTime();
    const sim = await start({ clock: { ...systemClock, now: () => at } });
    const c = await client(sim);
    c.auth();
    if (register) c.register(SERVICES);
    return c;
  }

  it('asks the agent for the time and streams the answer with a tone, a mood and END_FRAME', async () => {
    const c = await ready();
    const seenBefore = c.frames.length;
    c.textTurn('t0000001', 'What time is it?');
    const call = await nextCall(c);
    expect(call).toMatchObject({ method: 'get_current_time', params: { format: 'simple' } });
    c.result(call.call_id, { success: true, data: '14:30' });
    const reply = (await c.waitReply('t0000001')).slice(seenBefore);
    expect(textOf(reply)).toBe("It's 14:30.");
    const texts = reply.filter((f) => f.type === FrameType.TEXT);
    expect(texts.length).toBeGreaterThanOrEqual(2);
    expect(texts.length).toBeLessThanOrEqual(3);
    const audio = Buffer.concat(
      reply.filter((f) => f.type === FrameType.AUDIO).map((f) => f.payload),
    );
    expect(audio.length).toBe(300 * 32);
    expect(audio.includes('##END')).toBe(false);
    const emoji = reply.find((f) => f.type === FrameType.EMOJI)!;
    expect(JSON.parse(emoji.payload.toString())).toEqual({ emoji: 'happy' });
    expect(reply.at(-1)!.type).toBe(FrameType.END);
  });

  it('writes a note through create_file with a dated name and the text after "note:"', async () => {
    const c = await ready();
    c.textTurn('t0000002', 'Write a note: buy milk ');
    const call = await nextCall(c);
    expect(call).toMatchObject({
      method: 'create_file',
      params: { filename: 'notes/note-20250122-143025.txt', content: 'buy milk' },
    });
    c.result(call.call_id, {
      success: true,
      data: '/home/me/Documents/notes/note-20250122-143025.txt',
    });
    expect(textOf(await c.waitReply('t0000002'))).toBe(
      'Saved it as /home/me/Documents/notes/note-20250122-143025.txt.',
    );
  });

  it('says why a note was not saved like a person, with a sad face, never the words for the model', async () => {
    // The agent's sentences for the AI model (app/dispatch.ts), and what a person hears instead.
    const refusals: Array<[string, string]> = [
      [
        "the user declined to let 'create_file' run (Create file notes/x.txt); do not retry unless the user asks again",
        "You said no, so I didn't save the note.",
      ],
      [
        "the user has blocked the service 'create_file'; do not retry — tell the user it is blocked in the app's Services page",
        "That's switched off or blocked in the app's Services page, so I didn't save the note.",
      ],
      [
        "the service 'create_file' is switched off by the user; do not retry it — tell the user it can be switched on in the app's Services page",
        "That's switched off or blocked in the app's Services page, so I didn't save the note.",
      ],
      [
        "the user did not answer the permission request for 'create_file' in time, so it was not run",
        "You didn't answer in time, so I didn't save the note.",
      ],
      [
        "invalid call to 'create_file': /content must be string",
        "Something was wrong with my request, so I couldn't save the note.",
      ],
      [
        "'notes/x.txt' already exists; call again with overwrite: true to replace it (the user will be asked)",
        "One by that name is already there, so I couldn't save the note.",
      ],
    ];
    const c = await ready();
    let turn = 30;
    for (const [forModel, forPerson] of refusals) {
      const taskId = `t00000${turn++}`;
      c.textTurn(taskId, '记一下明天开会');
      const call = await nextCall(c);
      expect(call.params.content).toBe('记一下明天开会');
      c.result(call.call_id, { success: false, error: forModel });
      const reply = await c.waitReply(taskId);
      expect(textOf(reply)).toBe(forPerson);
      const emoji = reply.find((f) => f.type === FrameType.EMOJI)!;
      expect(JSON.parse(emoji.payload.toString())).toEqual({ emoji: 'sad' });
    }
  });

  it('speaks the app language when told it (zh-CN)', async () => {
    const sim = await start({ language: () => 'zh-CN' });
    const c = await client(sim);
    c.auth();
    c.register(SERVICES);
    c.textTurn('t0000040', 'write a note: 开会');
    const call = await nextCall(c);
    c.result(call.call_id, {
      success: false,
      error:
        "the user declined to let 'create_file' run (x); do not retry unless the user asks again",
    });
    expect(textOf(await c.waitReply('t0000040'))).toBe('你没有同意，所以我没有保存这条笔记。');
  });

  it('gives up on a call after its wait and says so in plain words, no call id or method', async () => {
    const sim = await start({ callTimeoutMs: 50 });
    const c = await client(sim);
    c.auth();
    c.register(SERVICES);
    c.textTurn('t0000041', 'what time is it');
    await nextCall(c);
    const text = textOf(await c.waitReply('t0000041'));
    expect(text).toBe("I didn't get an answer from your computer in time.");
  });

  it('says the service is missing instead of calling what was never registered', async () => {
    const c = await ready(false);
    c.textTurn('t0000004', 'what time is it');
    expect(textOf(await c.waitReply('t0000004'))).toBe(
      "I can't tell you the time: your computer hasn't offered that service.",
    );
    expect(c.frames.some((f) => f.type === FrameType.MCP)).toBe(false);
  });

  it('echoes anything else with a hint, and measures a voice turn', async () => {
    const c = await ready();
    c.textTurn('t0000005', 'hello');
    expect(textOf(await c.waitReply('t0000005'))).toBe(
      'You said: hello. Try "what time is it" or "write a note: buy milk".',
    );
    for (let i = 0; i < 5; i++) c.send(FrameType.AUDIO, 'v0000001', i, Buffer.alloc(640));
    c.send(FrameType.END, 'v0000001', 5);
    expect(textOf(await c.waitReply('v0000001'))).toBe('I heard 100 ms of audio.');
  });

  it('cuts a reply into two or three non-empty pieces that join back to it', () => {
    for (const text of [
      'Hi',
      "It's 14:30.",
      'You said: hello. Try "what time is it" or "write a note".',
      '现在是下午三点半，天气不错，适合出门散步。',
    ]) {
      const out = pieces(text);
      expect(out.join('')).toBe(text);
      expect(out.length).toBeGreaterThanOrEqual(2);
      expect(out.length).toBeLessThanOrEqual(3);
      expect(out.every((p) => p.length > 0)).toBe(true);
    }
  });
});

describe('the demo conversation about notes', () => {
  const { start, client } = useSim();
  const FILE_SERVICES = {
    ...SERVICES,
    list_directory: {
      description: 'List a folder',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
    },
    read_file: {
      description: 'Read a text file',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' } },
        required: ['path'],
      },
    },
  };

  async function ready(services: Record<string, unknown> = FILE_SERVICES): Promise<RawClient> {
    const c = await client(await start());
    c.auth();
    c.register(services);
    return c;
  }

  it('lists the notes through list_directory and reads their names back', async () => {
    const c = await ready();
    c.textTurn('t0000011', 'List my notes');
    const call = await nextCall(c);
    expect(call).toMatchObject({ method: 'list_directory', params: { path: 'notes' } });
    const entries = Array.from({ length: 12 }, (_, i) => ({ name: `n${i}.txt`, kind: 'file' }));
    c.result(call.call_id, { success: true, data: { path: 'notes', total: 12, entries } });
    expect(textOf(await c.waitReply('t0000011'))).toBe(
      'You have 12 notes: n0.txt, n1.txt, n2.txt, n3.txt, n4.txt, n5.txt, n6.txt, n7.txt, n8.txt, n9.txt and 2 more.',
    );
  });

  it('says so when there are no notes yet', async () => {
    const c = await ready();
    c.textTurn('t0000012', 'show notes');
    const call = await nextCall(c);
    c.result(call.call_id, { success: true, data: { path: 'notes', total: 0, entries: [] } });
    expect(textOf(await c.waitReply('t0000012'))).toBe(
      'You have no notes yet. Try "write a note: buy milk".',
    );
  });

  it('reads a note through read_file, adding .txt to a bare name', async () => {
    const c = await ready();
    c.textTurn('t0000013', 'read note shopping');
    const call = await nextCall(c);
    expect(call).toMatchObject({ method: 'read_file', params: { path: 'notes/shopping.txt' } });
    c.result(call.call_id, { success: true, data: { content: 'eggs, milk\n' } });
    expect(textOf(await c.waitReply('t0000013'))).toBe('shopping.txt says: eggs, milk');

    c.textTurn('t0000014', 'Read note: note-20250122-143025.txt');
    const named = await nextCall(c);
    expect(named.params).toEqual({ path: 'notes/note-20250122-143025.txt' });
    c.result(named.call_id, {
      success: false,
      error:
        "'notes/x.txt' does not exist (any more); nothing was read. Call list_directory to see what is there",
    });
    const refused = await c.waitReply('t0000014');
    expect(textOf(refused)).toBe("I couldn't find it, so I couldn't read the note.");
    const emoji = refused.find((f) => f.type === FrameType.EMOJI)!;
    expect(JSON.parse(emoji.payload.toString())).toEqual({ emoji: 'sad' });
  });

  it('says the file services are missing instead of calling them', async () => {
    const c = await ready(SERVICES);
    c.textTurn('t0000015', 'list my notes');
    expect(textOf(await c.waitReply('t0000015'))).toBe(
      "I can't list your notes: your computer hasn't offered that service.",
    );
    c.textTurn('t0000016', 'read note a');
    expect(textOf(await c.waitReply('t0000016'))).toBe(
      "I can't read the note: your computer hasn't offered that service.",
    );
    expect(c.frames.some((f) => f.type === FrameType.MCP)).toBe(false);
  });
});

describe('the demo notes against the real agent', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('writes a note, lists it and reads it back, asking before anything leaves', async () => {
    h = await startHarness({ sim: { demo: true } });
    const { agent, session } = h;
    agent.broker.attach({ name: 'test' });
    const asked: string[] = [];
    agent.events.on('prompt', (p) => {
      asked.push(p.summary);
      agent.answerPrompt(p.id, 'once');
    });
    const say = async (text: string) => {
      const sent = session.sendText(text);
      if (!sent.ok) throw new Error(sent.message);
      const done = await nextEvent(agent.events, 'replyDone', (r) => r.taskId === sent.taskId);
      return done.text;
    };

    expect(await say('write a note: buy milk')).toMatch(/^Saved it as /);
    const listed = await say('list my notes');
    const name = /^You have 1 note: (note-\d{8}-\d{6}\.txt)\.$/.exec(listed)?.[1];
    expect(name, listed).toBeDefined();
    expect(await say(`read note ${name}`)).toBe(`${name} says: buy milk`);
    expect(asked.slice(1)).toEqual([
      `Send the list of notes${path.sep} (1 entry) to Test server`,
      `Send the contents of ${path.join('notes', name!)} (8 B) to Test server`,
    ]);
  });
});
