import { describe, expect, it } from 'vitest';
import { Newest } from '../../app/chat/newest.js';
import { FakeClock } from '../helpers/fake-clock.js';

function setup() {
  const clock = new FakeClock(1000);
  const sent: Array<{ key: string; v: string }> = [];
  const newest = new Newest<{ key: string; v: string }>(
    clock,
    50,
    (m) => sent.push(m),
    (a, b) => a.v === b.v,
  );
  const put = (key: string, v: string) => newest.put(key, { key, v });
  return { clock, sent, newest, put };
}

describe('Newest: the latest state, a few times a second at most', () => {
  it('sends the first at once, then only the newest of a flood when the window ends', () => {
    const { clock, sent, put } = setup();
    put('a', 'happy');
    expect(sent).toEqual([{ key: 'a', v: 'happy' }]);
    for (let i = 0; i < 10_000; i++) put('a', i % 2 ? 'sad' : 'happy');
    expect(sent).toHaveLength(1);
    clock.advance(50);
    expect(sent).toEqual([
      { key: 'a', v: 'happy' },
      { key: 'a', v: 'sad' },
    ]);
    // The window that sent 'sad' ends with nothing new: nothing more, and no timer left.
    clock.advance(50);
    expect(sent).toHaveLength(2);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('drops the same state again, also when a window ends on it', () => {
    const { clock, sent, put } = setup();
    put('a', 'happy');
    put('a', 'sad');
    put('a', 'happy');
    clock.advance(50);
    expect(sent).toHaveLength(1);
    put('a', 'happy');
    expect(sent).toHaveLength(1);
    put('a', 'calm');
    expect(sent.at(-1)).toEqual({ key: 'a', v: 'calm' });
  });

  it('keeps a window per key, and sends nothing held once a key is forgotten or it is disposed', () => {
    const { clock, sent, newest, put } = setup();
    put('a', '1');
    put('b', '1');
    put('a', '2');
    put('b', '2');
    expect(sent.map((m) => `${m.key}${m.v}`)).toEqual(['a1', 'b1']);
    newest.forget('a');
    clock.advance(50);
    expect(sent.map((m) => `${m.key}${m.v}`)).toEqual(['a1', 'b1', 'b2']);
    put('b', '3');
    newest.dispose();
    clock.advance(50);
    put('b', '4');
    expect(sent).toHaveLength(3);
    expect(clock.pendingTimers()).toBe(0);
  });
});
