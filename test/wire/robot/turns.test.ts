import { describe, expect, it } from 'vitest';
import { seededIds } from '../../../app/ids.js';
import { MAX_REPLY_CHARS } from '../../../app/wire/kit/bounds.js';
import type { SessionEvents } from '../../../app/wire/session.js';
import { Turns } from '../../../app/wire/robot/turns.js';
import { VoiceUpload } from '../../../app/wire/robot/voice.js';

function setup() {
  const turns = new Turns(seededIds(3));
  const seen: Array<[string, unknown]> = [];
  for (const name of ['replyDelta', 'replyDone', 'replyInterrupted', 'thought', 'audio'] as const)
    turns.events.on(name, (p: SessionEvents[typeof name]) => seen.push([name, p]));
  return { turns, seen };
}

describe('Turns: replies without turn ids', () => {
  it('a text reply whose voice follows its final stays on one task; the next reply gets a new one', () => {
    const { turns, seen } = setup();
    const t = turns.begin();
    turns.chunk('Hi');
    turns.final('Hi!');
    turns.startAudio();
    turns.audioFrame(Buffer.alloc(4));
    turns.endAudio();
    turns.chunk('Later');
    expect(seen.map(([n]) => n)).toEqual([
      'replyDelta',
      'replyDelta',
      'replyDone',
      'audio',
      'replyDelta',
    ]);
    expect((seen[1]![1] as { text: string }).text).toBe('!');
    expect((seen[2]![1] as { taskId: string; text: string }).text).toBe('Hi!');
    expect(seen.slice(0, 4).every(([, p]) => (p as { taskId: string }).taskId === t)).toBe(true);
    expect((seen[4]![1] as { taskId: string }).taskId).not.toBe(t);
  });

  it('a reply with thoughts waits for its final even when its audio ends first', () => {
    const { turns, seen } = setup();
    turns.begin();
    turns.thought('thinking');
    turns.startAudio();
    turns.audioFrame(Buffer.alloc(2));
    turns.endAudio();
    expect(seen.map(([n]) => n)).toEqual(['thought', 'audio']);
    turns.final('Done.');
    expect(seen.at(-1)).toEqual(['replyDone', expect.objectContaining({ text: 'Done.' })]);
  });

  it('a new turn interrupts the reply being received and drops its late text and audio', () => {
    const { turns, seen } = setup();
    const first = turns.begin();
    turns.chunk('Once');
    turns.startAudio();
    turns.audioFrame(Buffer.alloc(4));
    const second = turns.begin();
    expect(seen.at(-1)).toEqual(['replyInterrupted', { taskId: first, text: 'Once' }]);
    const count = seen.length;
    turns.chunk(' upon');
    turns.audioFrame(Buffer.alloc(4));
    turns.final('Once upon');
    turns.endAudio();
    expect(seen).toHaveLength(count);
    turns.chunk('Answer');
    expect(seen.at(-1)).toEqual(['replyDelta', { taskId: second, text: 'Answer' }]);
  });

  it('a lost link ends the open reply as interrupted and forgets what was being dropped', () => {
    const { turns, seen } = setup();
    const t = turns.begin();
    turns.chunk('Half');
    turns.lost();
    expect(seen.at(-1)).toEqual(['replyInterrupted', { taskId: t, text: 'Half' }]);
    turns.chunk('New');
    expect(seen.at(-1)?.[0]).toBe('replyDelta');
  });
});

describe('Turns: bounds', () => {
  it('keeps at most MAX_REPLY_CHARS of one reply, its thoughts too, and says so once', () => {
    const { turns, seen } = setup();
    const odd: string[] = [];
    turns.events.on('odd', ({ message }) => odd.push(message));
    turns.begin();
    const piece = 'y'.repeat(MAX_REPLY_CHARS / 2 + 1);
    for (let i = 0; i < 5; i++) {
      turns.chunk(piece);
      turns.thought(piece);
    }
    const shown = (name: string) =>
      seen
        .filter(([n]) => n === name)
        .reduce((n, [, p]) => n + (p as { text: string }).text.length, 0);
    expect(shown('replyDelta')).toBe(MAX_REPLY_CHARS);
    expect(shown('thought')).toBe(MAX_REPLY_CHARS);
    expect(odd).toHaveLength(1);
    turns.final('');
    expect((seen.at(-1)![1] as { text: string }).text).toHaveLength(MAX_REPLY_CHARS);
  });
});

describe('VoiceUpload: 20–60 ms frames', () => {
  it('sends whole frames of at most 60 ms, holds back less than 20 ms, and flushes the rest', () => {
    const up = new VoiceUpload('t');
    expect(up.push(new Uint8Array(600))).toEqual([]);
    const frames = up.push(new Uint8Array(4000)); // 4600 bytes waiting
    expect(frames.map((f) => f.length)).toEqual([1920, 1920, 760]);
    expect(up.push(new Uint8Array(101))).toEqual([]);
    expect(up.flush().map((f) => f.length)).toEqual([100]);
    expect(up.flush()).toEqual([]);
  });
});
