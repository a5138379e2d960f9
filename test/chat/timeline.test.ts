import { describe, expect, it } from 'vitest';
import type { AgentEvents } from '../../app/agent.js';
import { STREAM_EMIT_MS, TIMELINE_LIMIT, Timeline } from '../../app/chat/timeline.js';
import type { ChatItem } from '../../app/contract/chat.js';
import { Emitter } from '../../app/events.js';
import { FakeClock } from '../helpers/fake-clock.js';

function setup() {
  const events = new Emitter<AgentEvents>();
  const clock = new FakeClock(1000);
  const timeline = new Timeline(events, clock);
  const item = (id: string): ChatItem | undefined => timeline.list().find((i) => i.id === id);
  const sent: ChatItem[] = [];
  timeline.events.on('chat', (i) => sent.push(i));
  const sentFor = (id: string): ChatItem[] => sent.filter((i) => i.id === id);
  return { events, clock, timeline, item, sent, sentFor };
}

const delta = (id: string, taskId: string, text: string) => ({ id, taskId, text });

describe('the conversation timeline', () => {
  it('keeps a reply that ended as done when the next turn supersedes its task', () => {
    const { events, item, sentFor } = setup();
    events.emit('replyDelta', delta('adv', 'task0001', "It's noon."));
    events.emit('replyDone', { id: 'adv', taskId: 'task0001', text: "It's noon." });
    const told = sentFor('a:adv:task0001').length;
    events.emit('replyInterrupted', { id: 'adv', taskId: 'task0001', text: '' });
    expect(item('a:adv:task0001')).toMatchObject({ state: 'done', text: "It's noon." });
    expect(sentFor('a:adv:task0001')).toHaveLength(told);
    // One still streaming is cut off as before.
    events.emit('replyDelta', delta('adv', 'task0002', 'It is'));
    events.emit('replyInterrupted', { id: 'adv', taskId: 'task0002', text: '' });
    expect(item('a:adv:task0002')).toMatchObject({ state: 'interrupted', text: 'It is' });
  });

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

  it('sends a flood of transcripts of one turn as its newest words, once per window', () => {
    const { events, clock, sentFor, item } = setup();
    events.emit('transcript', { id: 'xz', taskId: 't3', text: 'w' });
    for (let i = 1; i <= 3000; i++)
      events.emit('transcript', { id: 'xz', taskId: 't3', text: `w${i}` });
    // The bubble at once, its first change at once, the rest held for the window.
    expect(sentFor('u:xz:t3')).toHaveLength(2);
    expect(item('u:xz:t3')).toMatchObject({ text: 'w3000' });
    clock.advance(STREAM_EMIT_MS);
    expect(sentFor('u:xz:t3')).toHaveLength(3);
    expect(sentFor('u:xz:t3').at(-1)).toMatchObject({ text: 'w3000' });
    // The same words again are nothing new.
    clock.advance(10 * STREAM_EMIT_MS);
    events.emit('transcript', { id: 'xz', taskId: 't3', text: 'w3000' });
    expect(sentFor('u:xz:t3')).toHaveLength(3);
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

  it("keeps a call's time deciding apart from its running time", () => {
    const { events, item } = setup();
    const connection = { id: 'srv', name: 'srv' };
    events.emit('callStarted', {
      key: 'k2',
      connection,
      dialect: 'advent',
      callId: 'c2',
      service: 'create_file',
      params: {},
      at: 1000,
    });
    events.emit('callFinished', {
      key: 'k2',
      connection,
      callId: 'c2',
      service: 'create_file',
      decision: 'allowed-once',
      outcome: 'ok',
      durationMs: 10_718,
      waitMs: 10_691,
      runMs: 7,
      auditSeq: 3,
    });
    expect(item('t:k2')).toMatchObject({ durationMs: 10_718, waitMs: 10_691, runMs: 7 });
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

  it("keeps the agent's own notice in words a window translates, beside its English line", () => {
    const { events, timeline } = setup();
    const words = {
      key: 'notice.callsPaced',
      params: { server: 'Advent', burst: 60, perSecond: 10 },
    } as const;
    events.emit('notice', {
      level: 'warn',
      message: "'Advent' is calling services faster than 10 a second",
      connection: { id: 'adv', name: 'Advent' },
      words,
    });
    events.emit('notice', { level: 'info', message: 'reconnected' });
    const notices = timeline.list().filter((i) => i.kind === 'notice');
    expect(notices[0]).toMatchObject({ connection: 'adv', level: 'warn', words });
    expect(notices[0]).toHaveProperty(
      'text',
      "'Advent' is calling services faster than 10 a second",
    );
    expect(notices[1]).not.toHaveProperty('words');
  });

  describe('a streamed reply', () => {
    it('sends 65 536 one-character deltas as a bounded number of updates, the text whole in a snapshot', () => {
      const { events, clock, item, sentFor } = setup();
      for (let i = 0; i < 65_536; i++) events.emit('replyDelta', delta('xz', 't1', 'x'));
      expect(sentFor('a:xz:t1').length).toBeLessThanOrEqual(2);
      expect(item('a:xz:t1')).toMatchObject({ text: 'x'.repeat(65_536), state: 'streaming' });

      const before = sentFor('a:xz:t1').length;
      clock.advance(STREAM_EMIT_MS);
      const after = sentFor('a:xz:t1');
      expect(after).toHaveLength(before + 1);
      expect(after.at(-1)).toMatchObject({ text: 'x'.repeat(65_536), state: 'streaming' });
      // Quiet since: the window closes without sending anything more or leaving a timer behind.
      clock.advance(10 * STREAM_EMIT_MS);
      expect(sentFor('a:xz:t1')).toHaveLength(before + 1);
      expect(clock.pendingTimers()).toBe(0);
    });

    it('shows the first words at once, then the newest text at most once per window', () => {
      const { events, clock, sentFor } = setup();
      events.emit('replyDelta', delta('xz', 't1', 'Hel'));
      expect(sentFor('a:xz:t1')).toMatchObject([{ text: 'Hel' }]);
      events.emit('replyDelta', delta('xz', 't1', 'lo'));
      events.emit('thought', delta('xz', 't1', 'greet'));
      clock.advance(STREAM_EMIT_MS - 1);
      expect(sentFor('a:xz:t1')).toHaveLength(1);
      clock.advance(1);
      expect(sentFor('a:xz:t1')).toMatchObject([
        { text: 'Hel' },
        { text: 'Hello', thought: 'greet' },
      ]);
    });

    it('sends what a reply holds back before a later item, in the order the server said them', () => {
      // A terminal prints in order: a call the server made after these words must follow them.
      const { events, sent } = setup();
      events.emit('replyDelta', delta('xz', 't1', 'line one'));
      events.emit('replyDelta', delta('xz', 't1', '\nbefore'));
      events.emit('status', { id: 'xz', name: 'XZ', text: 'busy' });
      events.emit('status', { id: 'xz', name: 'XZ', text: 'still busy' });
      expect(
        sent.map((i) => (i.kind === 'notice' ? i.text : i.kind === 'assistant' ? i.text : i.kind)),
      ).toEqual(['line one', 'line one\nbefore', 'busy', 'still busy']);
    });

    it("never sends 'streaming' after 'done', even when the window ends later", () => {
      const { events, clock, sentFor } = setup();
      events.emit('replyDelta', delta('xz', 't1', 'It is '));
      events.emit('replyDelta', delta('xz', 't1', 'noon'));
      events.emit('mood', { id: 'xz', taskId: 't1', emoji: '🙂' });
      events.emit('replyDelta', delta('xz', 't1', '.'));
      events.emit('replyDone', delta('xz', 't1', ''));
      clock.advance(10 * STREAM_EMIT_MS);
      const seen = sentFor('a:xz:t1');
      expect(seen.at(-1)).toMatchObject({ text: 'It is noon.', state: 'done', mood: '🙂' });
      const done = seen.findIndex((i) => i.kind === 'assistant' && i.state === 'done');
      expect(done).toBe(seen.length - 1);
      // The mood waited in the window with the text after it; the end sent all of it at once.
      expect(seen).toMatchObject([
        { text: 'It is ' },
        { text: 'It is noon.', state: 'done', mood: '🙂' },
      ]);
      expect(clock.pendingTimers()).toBe(0);
    });

    it("sends a flood of moods between deltas as the reply's newest state, once per window", () => {
      // A hostile server alternating moods and words: each used to send the whole reply.
      const { events, clock, sentFor } = setup();
      events.emit('replyDelta', delta('xz', 't1', 'x'.repeat(1000)));
      for (let i = 0; i < 5000; i++) {
        events.emit('mood', { id: 'xz', taskId: 't1', emoji: i % 2 ? '🙂' : '😐' });
        events.emit('replyDelta', delta('xz', 't1', 'y'));
      }
      expect(sentFor('a:xz:t1')).toHaveLength(1);
      clock.advance(STREAM_EMIT_MS);
      const seen = sentFor('a:xz:t1');
      expect(seen).toHaveLength(2);
      expect(seen.at(-1)).toMatchObject({
        text: `${'x'.repeat(1000)}${'y'.repeat(5000)}`,
        mood: '🙂',
      });
    });

    it('shows the first mood of a reply at once, and ignores the same mood again', () => {
      const { events, clock, sentFor } = setup();
      events.emit('mood', { id: 'xz', taskId: 't1', emoji: '🙂' });
      expect(sentFor('a:xz:t1')).toMatchObject([{ text: '', mood: '🙂', state: 'streaming' }]);
      clock.advance(10 * STREAM_EMIT_MS);
      events.emit('mood', { id: 'xz', taskId: 't1', emoji: '🙂' });
      clock.advance(10 * STREAM_EMIT_MS);
      expect(sentFor('a:xz:t1')).toHaveLength(1);
    });

    it('keeps a separate window for each of two interleaved replies', () => {
      const { events, clock, sentFor } = setup();
      events.emit('replyDelta', delta('xz', 'a', 'A1'));
      clock.advance(20);
      events.emit('replyDelta', delta('rb', 'b', 'B1'));
      events.emit('replyDelta', delta('xz', 'a', 'A2'));
      events.emit('replyDelta', delta('rb', 'b', 'B2'));
      // Each reply's first words show at once, whatever the other is doing.
      expect(sentFor('a:xz:a')).toMatchObject([{ text: 'A1' }]);
      expect(sentFor('a:rb:b')).toMatchObject([{ text: 'B1' }]);

      clock.advance(STREAM_EMIT_MS - 20);
      expect(sentFor('a:xz:a')).toMatchObject([{ text: 'A1' }, { text: 'A1A2' }]);
      expect(sentFor('a:rb:b')).toHaveLength(1);

      events.emit('replyDelta', delta('xz', 'a', 'A3'));
      clock.advance(20);
      expect(sentFor('a:rb:b')).toMatchObject([{ text: 'B1' }, { text: 'B1B2' }]);
      expect(sentFor('a:xz:a')).toHaveLength(2);
      clock.advance(STREAM_EMIT_MS);
      expect(sentFor('a:xz:a').at(-1)).toMatchObject({ text: 'A1A2A3' });
      expect(sentFor('a:xz:a')).toHaveLength(3);
    });

    it('does not revive a reply dropped from the timeline when its window ends', () => {
      const { events, clock, timeline, sentFor } = setup();
      events.emit('replyDelta', delta('xz', 't1', 'first'));
      for (let i = 0; i < TIMELINE_LIMIT - 1; i++)
        events.emit('notice', { level: 'info', message: `notice ${i}` });
      // Held back while the reply is the oldest item; the next item pushes it out.
      events.emit('replyDelta', delta('xz', 't1', ' and held back'));
      events.emit('notice', { level: 'info', message: 'one too many' });
      expect(timeline.list().some((i) => i.id === 'a:xz:t1')).toBe(false);
      // Its window went with it, not left to fire.
      expect(clock.pendingTimers()).toBe(0);

      clock.advance(10 * STREAM_EMIT_MS);
      expect(sentFor('a:xz:t1')).toMatchObject([{ text: 'first' }]);
      expect(clock.pendingTimers()).toBe(0);
    });

    it('leaves no timer and no listener behind once disposed', () => {
      const events = new Emitter<AgentEvents>();
      const clock = new FakeClock(1000);
      const timeline = new Timeline(events, clock);
      const sent: ChatItem[] = [];
      timeline.events.on('chat', (i) => sent.push(i));
      events.emit('replyDelta', delta('xz', 't1', 'a'));
      events.emit('replyDelta', delta('xz', 't1', 'b'));
      timeline.dispose();
      expect(clock.pendingTimers()).toBe(0);
      expect(events.totalListeners).toBe(0);
      clock.advance(10 * STREAM_EMIT_MS);
      expect(sent).toHaveLength(1);
      expect(timeline.list()).toMatchObject([{ text: 'ab' }]);
    });
  });
});
