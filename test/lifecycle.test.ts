import { describe, expect, it } from 'vitest';
import { Emitter } from '../app/events.js';
import { DisposableStore, disposableTimeout, toDisposable } from '../app/lifecycle.js';
import { FakeClock } from './helpers/fake-clock.js';

describe('Emitter.on', () => {
  it('returns a disposable that is also callable, and either way removes only that listener', () => {
    const e = new Emitter<{ tick: number }>();
    const seen: string[] = [];
    const a = e.on('tick', (n) => seen.push(`a${n}`));
    const b = e.on('tick', (n) => seen.push(`b${n}`));
    e.emit('tick', 1);
    a.dispose();
    e.emit('tick', 2);
    b();
    e.emit('tick', 3);
    expect(seen).toEqual(['a1', 'b1', 'b2']);
    expect(e.totalListeners).toBe(0);
  });

  it('counts one function subscribed twice twice, and each disposal removes one', () => {
    const e = new Emitter<{ tick: number; tock: number }>();
    let n = 0;
    const f = () => (n += 1);
    const first = e.on('tick', f);
    e.on('tick', f);
    e.on('tock', f);
    expect(e.totalListeners).toBe(3);
    first.dispose();
    first.dispose();
    e.emit('tick', 0);
    expect(n).toBe(1);
    expect(e.listenerCount('tick')).toBe(1);
  });
});

describe('DisposableStore', () => {
  it('disposes everything it holds, even when one disposal throws', () => {
    const store = new DisposableStore();
    const done: string[] = [];
    store.add(toDisposable(() => done.push('a')));
    store.add(
      toDisposable(() => {
        throw new Error('boom');
      }),
    );
    store.add(toDisposable(() => done.push('c')));
    expect(() => store.dispose()).toThrow('boom');
    expect(done).toEqual(['a', 'c']);
    expect(store.size).toBe(0);
  });

  it('disposes at once what is added after it was disposed', () => {
    const store = new DisposableStore();
    store.dispose();
    let disposed = false;
    store.add(toDisposable(() => (disposed = true)));
    expect(disposed).toBe(true);
    expect(store.size).toBe(0);
  });

  it('holds listeners and timers alike: after dispose none is left', () => {
    const clock = new FakeClock();
    const e = new Emitter<{ x: number }>();
    const store = new DisposableStore();
    let fired = false;
    store.add(e.on('x', () => undefined));
    store.add(disposableTimeout(clock, 1000, () => (fired = true)));
    expect(clock.pendingTimers()).toBe(1);
    store.dispose();
    clock.advance(2000);
    expect(fired).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
    expect(e.totalListeners).toBe(0);
  });

  it('clear() empties the store and keeps it usable; delete() disposes one item', () => {
    const store = new DisposableStore();
    const done: string[] = [];
    const one = store.add(toDisposable(() => done.push('one')));
    store.add(toDisposable(() => done.push('two')));
    store.delete(one);
    expect(done).toEqual(['one']);
    store.clear();
    expect(done).toEqual(['one', 'two']);
    store.add(toDisposable(() => done.push('three')));
    expect(store.size).toBe(1);
    expect(store.isDisposed).toBe(false);
  });
});
