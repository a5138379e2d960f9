import { describe, expect, it } from 'vitest';
import { RecentExecutes, type Verdict } from '../../../app/wire/robot/dedupe.js';
import { FakeClock } from '../../helpers/fake-clock.js';

function setup(windowMs = 5000, maxEntries?: number) {
  const clock = new FakeClock(1_000_000);
  const recent = new RecentExecutes(windowMs, clock, maxEntries);
  let n = 0;
  const arrive = (tool: string, input: unknown, id?: string | number): Verdict =>
    recent.arrive(tool, input, id, () => `idless-${++n}`);
  return { clock, recent, arrive };
}

describe('RecentExecutes: the twin the server sends of every execute', () => {
  it('id first: the copy with the id runs, its id-less twin is a duplicate of it', () => {
    const { arrive } = setup();
    const first = arrive('create_file', { filename: 'a', content: 'x' }, 'call-1');
    expect(first).toMatchObject({ action: 'run', call: { callId: 'call-1' } });
    // Key order does not matter: the input is compared as canonical JSON.
    expect(arrive('create_file', { content: 'x', filename: 'a' })).toEqual({
      action: 'duplicate',
      of: 'call-1',
      paired: true,
    });
  });

  it('id-less first: it runs, and its twin with the id is answered from that run', async () => {
    const { arrive } = setup();
    const first = arrive('bump', { by: 1 });
    expect(first).toMatchObject({ action: 'run', call: { callId: 'idless-1' } });
    const twin = arrive('bump', { by: 1 }, 7);
    expect(twin).toMatchObject({ action: 'twin', of: 'idless-1' });
    if (first.action !== 'run' || twin.action !== 'twin') throw new Error('unexpected verdicts');
    first.call.settle({ ok: true, data: { count: 1 } });
    expect(await twin.outcome).toEqual({ ok: true, data: { count: 1 } });
  });

  it('two genuine identical calls, each sent as a pair, run once each', () => {
    const { arrive } = setup();
    expect(arrive('bump', {}, 'a').action).toBe('run');
    expect(arrive('bump', {}).action).toBe('duplicate');
    expect(arrive('bump', {}, 'b').action).toBe('run');
    expect(arrive('bump', {})).toEqual({ action: 'duplicate', of: 'b', paired: true });
  });

  it('pairs id-less-first pairs too, and never starts a second id-less run inside the window', () => {
    const { arrive } = setup();
    expect(arrive('bump', {}).action).toBe('run'); // idless-1
    expect(arrive('bump', {}, 'a')).toMatchObject({ action: 'twin', of: 'idless-1' });
    expect(arrive('bump', {})).toEqual({ action: 'duplicate', of: 'idless-1', paired: false });
    // …so the second call's copy with an id runs on its own and is answered.
    expect(arrive('bump', {}, 'b')).toMatchObject({ action: 'run', call: { callId: 'b' } });
  });

  it('a repeated request id is a repeat, never a second run', () => {
    const { arrive } = setup();
    expect(arrive('bump', {}, 'a').action).toBe('run');
    expect(arrive('bump', {}, 'a')).toEqual({ action: 'repeat', of: 'a' });
    expect(arrive('bump', { other: true }, 'a')).toEqual({ action: 'repeat', of: 'a' });
  });

  it('different tools or inputs are different calls', () => {
    const { arrive } = setup();
    expect(arrive('bump', { by: 1 }, 'a').action).toBe('run');
    expect(arrive('bump', { by: 2 }).action).toBe('run');
    expect(arrive('other', { by: 1 }).action).toBe('run');
  });

  it('forgets calls older than the window, and everything on clear()', () => {
    const { arrive, clock, recent } = setup(5000);
    expect(arrive('bump', {}, 'a').action).toBe('run');
    clock.advance(5001);
    expect(arrive('bump', {}).action).toBe('run');
    expect(arrive('bump', {}, 'b')).toMatchObject({ action: 'twin' });
    recent.clear();
    expect(arrive('bump', {}).action).toBe('run');
    expect(arrive('bump', {}, 'b').action).toBe('twin'); // ids forgotten with the old link
  });

  it('stays right through a long busy stream: twins inside the window, fresh runs past it', () => {
    const { arrive, clock } = setup(5000);
    // 3000 different calls 10 ms apart (far more than a window holds), each with its twin.
    for (let i = 0; i < 3000; i++) {
      expect(arrive('note', { i }, `id-${i}`).action).toBe('run');
      expect(arrive('note', { i })).toMatchObject({ action: 'duplicate', of: `id-${i}` });
      clock.advance(10);
    }
    // Call 2600 is 4 s old: a late copy is still its duplicate. Call 100 is long gone.
    expect(arrive('note', { i: 2600 })).toMatchObject({ action: 'duplicate', of: 'id-2600' });
    expect(arrive('note', { i: 100 }).action).toBe('run');
  });

  it('pairs identical copies oldest first, and lets unpaired ones expire in order', () => {
    const { arrive, clock } = setup(5000);
    // Three identical calls with ids, 1 s apart, their id-less twins late and together.
    for (const id of ['a', 'b', 'c']) {
      expect(arrive('bump', {}, id).action).toBe('run');
      clock.advance(1000);
    }
    expect(arrive('bump', {})).toEqual({ action: 'duplicate', of: 'a', paired: true });
    expect(arrive('bump', {})).toEqual({ action: 'duplicate', of: 'b', paired: true });
    // A fourth id-less copy finds no unpaired twin: a duplicate of the newest, not a second run.
    expect(arrive('bump', {})).toEqual({ action: 'duplicate', of: 'c', paired: true });
    expect(arrive('bump', {})).toEqual({ action: 'duplicate', of: 'c', paired: false });
    // 'a' and 'b' expire (paired), then 'c' and the id-less copies: a new copy runs again.
    clock.advance(5001);
    expect(arrive('bump', {}).action).toBe('run');
    // Two id-less-first pairs in a row, the second id-less copy a duplicate inside the window:
    // the copies with ids are answered from the one id-less run, the second as a call of its own.
    expect(arrive('bump', {}, 'd')).toMatchObject({ action: 'twin', of: 'idless-1' });
    expect(arrive('bump', {}, 'e').action).toBe('run');
  });

  it('holds thousands of identical executes in the window and still pairs each one right', () => {
    const { arrive, clock } = setup(5000);
    // One call repeated 4000 times 1 ms apart (a server looping on it), each a pair, id first.
    for (let i = 0; i < 4000; i++) {
      expect(arrive('get_current_time', {}, i).action).toBe('run');
      expect(arrive('get_current_time', {})).toEqual({
        action: 'duplicate',
        of: String(i),
        paired: true,
      });
      clock.advance(1);
    }
    // Now only the ids: each one is its own call; then their twins, oldest first.
    for (let i = 4000; i < 4003; i++) expect(arrive('get_current_time', {}, i).action).toBe('run');
    expect(arrive('get_current_time', {})).toEqual({
      action: 'duplicate',
      of: '4000',
      paired: true,
    });
    expect(arrive('get_current_time', {})).toEqual({
      action: 'duplicate',
      of: '4001',
      paired: true,
    });
  });

  it('remembers a bounded number of runs: a flood expires the oldest early', () => {
    const { arrive } = setup(5000, 3);
    for (const id of ['a', 'b', 'c', 'd', 'e']) expect(arrive('bump', {}, id).action).toBe('run');
    // Only the newest three are still held: the twins pair with them, oldest first.
    expect(arrive('bump', {})).toEqual({ action: 'duplicate', of: 'c', paired: true });
    expect(arrive('bump', {})).toEqual({ action: 'duplicate', of: 'd', paired: true });
    // A different call in a full window: it runs, and the oldest held one makes room.
    expect(arrive('other', {}, 'f').action).toBe('run');
    expect(arrive('other', {})).toEqual({ action: 'duplicate', of: 'f', paired: true });
  });
});
