import { describe, expect, it } from 'vitest';
import { FrameType } from '../../app/wire/advent/frame.js';
import { useSim } from './fixture.js';
import { type RawClient, textOf } from './raw-client.js';

const schema = { type: 'object', properties: {} };
const SERVICES = {
  set_timer: { description: 'Start a timer', parameters: schema },
  list_reminders: { description: 'List reminders', parameters: schema },
  open_url: { description: 'Open a web page', parameters: schema },
};

type Call = {
  type: 'call';
  data: { call_id: string; method: string; params: Record<string, unknown> };
};

async function nextCall(c: RawClient): Promise<Call['data']> {
  const seen = c.frames.filter((f) => f.type === FrameType.MCP).length;
  await c.waitFrame(() => c.frames.filter((f) => f.type === FrameType.MCP).length > seen);
  const frame = c.frames.filter((f) => f.type === FrameType.MCP)[seen]!;
  return (JSON.parse(frame.payload.toString()) as Call).data;
}

describe('the demo conversation: desktop phrases', () => {
  const { start, client } = useSim();

  async function ready(register = true): Promise<RawClient> {
    const c = await client(await start());
    c.auth();
    if (register) c.register(SERVICES);
    return c;
  }

  it('"remind me in 10 seconds to stretch" sets a timer with the label, and says so', async () => {
    const c = await ready();
    c.textTurn('t0000001', 'Remind me in 10 seconds to stretch.');
    const call = await nextCall(c);
    expect(call).toMatchObject({
      method: 'set_timer',
      params: { duration_seconds: 10, label: 'stretch' },
    });
    c.result(call.call_id, { success: true, data: { message: 'Timer set' } });
    expect(textOf(await c.waitReply('t0000001'))).toBe(
      "OK, I'll remind you in 10 seconds to stretch.",
    );
  });

  it('understands minutes, a plain timer and Chinese', async () => {
    const c = await ready();
    c.textTurn('t0000002', 'set a timer for 5 minutes for tea');
    const a = await nextCall(c);
    expect(a.params).toEqual({ duration_seconds: 300, label: 'tea' });
    c.result(a.call_id, { success: true, data: {} });
    expect(textOf(await c.waitReply('t0000002'))).toBe(
      'OK, a timer for 5 minutes (tea) is running.',
    );
    c.textTurn('t0000003', '2分钟后提醒我喝水');
    const b = await nextCall(c);
    expect(b.params).toEqual({ duration_seconds: 120, label: '喝水' });
    c.result(b.call_id, { success: true, data: {} });
    await c.waitReply('t0000003');
  });

  it('"open example.com" opens https://example.com; a refusal is told in the reply', async () => {
    const c = await ready();
    c.textTurn('t0000004', 'open example.com');
    const call = await nextCall(c);
    expect(call).toMatchObject({ method: 'open_url', params: { url: 'https://example.com' } });
    c.result(call.call_id, {
      success: false,
      error: "the user declined to let 'open_url' run (x); do not retry unless the user asks again",
    });
    expect(textOf(await c.waitReply('t0000004'))).toBe("You said no, so I didn't open the page.");
  });

  it('"list my reminders" reads them back', async () => {
    const c = await ready();
    c.textTurn('t0000005', 'list my reminders');
    const call = await nextCall(c);
    expect(call.method).toBe('list_reminders');
    c.result(call.call_id, {
      success: true,
      data: { reminders: [{ text: 'stretch', in: '8 seconds' }] },
    });
    expect(textOf(await c.waitReply('t0000005'))).toBe('Waiting: stretch in 8 seconds.');
  });

  it('says the service is missing instead of calling what was never registered', async () => {
    const c = await ready(false);
    c.textTurn('t0000006', 'remind me in 3 seconds to blink');
    expect(textOf(await c.waitReply('t0000006'))).toBe(
      "I can't set the timer: your computer hasn't offered that service.",
    );
    expect(c.frames.some((f) => f.type === FrameType.MCP)).toBe(false);
  });
});
