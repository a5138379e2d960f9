import { describe, expect, it } from 'vitest';
import type { AgentEvents } from '../../app/agent.js';
import { Timeline } from '../../app/chat/timeline.js';
import type { ChatItem } from '../../app/contract/chat.js';
import { Emitter } from '../../app/events.js';
import { FakeClock } from '../helpers/fake-clock.js';

function setup() {
  const events = new Emitter<AgentEvents>();
  const timeline = new Timeline(events, new FakeClock(1000));
  const item = (id: string): ChatItem | undefined => timeline.list().find((i) => i.id === id);
  return { events, timeline, item };
}

describe('the conversation timeline', () => {
  it('replaces a voice bubble label with what the server heard, keeping its length', () => {
    const { events, timeline, item } = setup();
    timeline.user('xz', 't1', '', 3200);
    events.emit('transcript', { id: 'xz', taskId: 't1', text: 'what time is it' });
    expect(item('u:xz:t1')).toMatchObject({ kind: 'user', text: 'what time is it', voiceMs: 3200 });
  });

  it('keeps a transcript that arrived before the voice turn was closed', () => {
    const { events, timeline, item } = setup();
    events.emit('transcript', { id: 'xz', taskId: 't2', text: 'hello' });
    timeline.user('xz', 't2', '', 1500);
    expect(item('u:xz:t2')).toMatchObject({ text: 'hello', voiceMs: 1500 });
    expect(timeline.list().filter((i) => i.kind === 'user')).toHaveLength(1);
  });

  it('gathers the AI reasoning under its reply, apart from the answer text', () => {
    const { events, item } = setup();
    events.emit('thought', { id: 'rb', taskId: 'a', text: 'The user wants the time. ' });
    events.emit('thought', { id: 'rb', taskId: 'a', text: 'I will call get_current_time.' });
    events.emit('replyDone', { id: 'rb', taskId: 'a', text: "It's noon." });
    expect(item('a:rb:a')).toMatchObject({
      kind: 'assistant',
      text: "It's noon.",
      thought: 'The user wants the time. I will call get_current_time.',
      state: 'done',
    });
  });

  it("keeps a bounded copy of a call's params, so 100 000 levels cannot break a snapshot", () => {
    const { events, timeline, item } = setup();
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    events.emit('callStarted', {
      key: 'k1',
      connection: { id: 'srv', name: 'srv' },
      dialect: 'advent',
      callId: 'c1',
      service: 'create_file',
      params: { deep, content: 'x'.repeat(1 << 20), token: 'secret-value' },
      at: 1000,
    });
    const snapshot = JSON.stringify(timeline.list());
    expect(snapshot.length).toBeLessThan(4096);
    expect(snapshot).not.toContain('secret-value');
    expect(item('t:k1')).toMatchObject({ kind: 'tool', service: 'create_file' });
  });

  it("marks the server's own STATUS words apart from the agent's notices", () => {
    const { events, timeline } = setup();
    events.emit('status', { id: 'adv', name: 'Advent', text: 'quota low' });
    events.emit('notice', {
      level: 'info',
      message: 'reconnected',
      connection: { id: 'adv', name: 'Advent' },
    });
    const notices = timeline.list().filter((i) => i.kind === 'notice');
    expect(notices).toMatchObject([
      { connection: 'adv', text: 'quota low', from: 'server' },
      { connection: 'adv', text: 'reconnected' },
    ]);
    expect(notices[1]).not.toHaveProperty('from');
  });

  it('marks a protocol line as technical, so a window shows it folded under words for people', () => {
    const { events, timeline } = setup();
    events.emit('notice', {
      level: 'info',
      message: "MCP notification 'notifications/progress' ignored",
      connection: { id: 'xz', name: 'XiaoZhi' },
      kind: 'protocol',
    });
    events.emit('notice', { level: 'warn', message: 'Always allow could not be saved' });
    const notices = timeline.list().filter((i) => i.kind === 'notice');
    expect(notices[0]).toMatchObject({ technical: true, connection: 'xz' });
    expect(notices[1]).not.toHaveProperty('technical');
  });
});
