import { describe, expect, it } from 'vitest';
import { ServerTasks } from '../app/server-tasks.js';
import { FakeClock } from './helpers/fake-clock.js';

describe('which tasks a server starts are shown', () => {
  it('shows a burst of new tasks, then one per interval; a task keeps its verdict', () => {
    const clock = new FakeClock();
    const tasks = new ServerTasks(clock, { burst: 3, perSecond: 10 });
    const shown = (ids: string[]) => ids.map((t) => tasks.admit('c', t).admitted);
    expect(shown(['a', 'b', 'c', 'd', 'e'])).toEqual([true, true, true, false, false]);
    // Later events of a task shown are shown; of one not shown, never, even once turns are free.
    clock.advance(10_000);
    expect(shown(['a', 'c', 'd', 'e'])).toEqual([true, true, false, false]);
    expect(shown(['f'])).toEqual([true]);
  });

  it('tells of a streak once, and keeps each connection apart', () => {
    const tasks = new ServerTasks(new FakeClock(), { burst: 1, perSecond: 1 });
    const streaks = ['a', 'b', 'c'].map((t) => tasks.admit('c', t).startsStreak);
    expect(streaks).toEqual([false, true, false]);
    expect(tasks.admit('other', 'a')).toEqual({ admitted: true, startsStreak: false });
  });

  it('remembers a bounded number of tasks', () => {
    const tasks = new ServerTasks(new FakeClock(), { burst: 1, perSecond: 1 }, 100);
    for (let i = 0; i < 10_000; i++) tasks.admit('c', `t${i}`);
    expect(tasks.size).toBe(100);
  });
});
