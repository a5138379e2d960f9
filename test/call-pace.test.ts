import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../app/audit/log.js';
import { CallPace, paceWait } from '../app/call-pace.js';
import { LOCAL_CONNECTION } from '../app/contract/connection.js';
import { type CallRequest, Dispatcher, type GateEvents } from '../app/dispatch.js';
import { seededIds } from '../app/ids.js';
import { Broker } from '../app/permissions/broker.js';
import { PolicyStore } from '../app/permissions/policy.js';
import { createFilesSandbox } from '../app/services/files/sandbox.js';
import { Registry } from '../app/services/registry.js';
import type { Service } from '../app/services/service.js';
import { FakeClock } from './helpers/fake-clock.js';

describe('the call pace of one connection', () => {
  it('lets a burst start at once, then one call per interval, and refills while quiet', () => {
    const clock = new FakeClock(1_000);
    const pace = new CallPace(clock, { burst: 3, perSecond: 10 });
    const waits = Array.from({ length: 6 }, () => pace.take('a').waitMs);
    // Three at once, then 100 ms apart: each later call waits for its own turn.
    expect(waits).toEqual([0, 0, 0, 100, 200, 300]);
    // Those turns are taken: 300 ms later the next call is the seventh, 100 ms after the sixth.
    clock.advance(300);
    expect(pace.take('a').waitMs).toBe(100);
    // A quiet spell as long as the burst takes to refill gives the whole burst back.
    clock.advance(10_000);
    expect(Array.from({ length: 4 }, () => pace.take('a').waitMs)).toEqual([0, 0, 0, 100]);
  });

  it('paces each connection on its own', () => {
    const pace = new CallPace(new FakeClock(), { burst: 2, perSecond: 1 });
    pace.take('a');
    pace.take('a');
    expect(pace.take('a').waitMs).toBe(1000);
    expect(pace.take('b').waitMs).toBe(0);
  });

  it('tells of a streak once, and again only after the connection went quiet long enough', () => {
    const clock = new FakeClock();
    const pace = new CallPace(clock, { burst: 2, perSecond: 10 });
    const streaks = () => Array.from({ length: 5 }, () => pace.take('a').startsStreak);
    expect(streaks()).toEqual([false, false, true, false, false]);
    // Still behind (its turns reach 500 ms ahead): the same streak goes on.
    clock.advance(200);
    expect(pace.take('a')).toMatchObject({ startsStreak: false });
    clock.advance(5_000);
    expect(streaks()).toEqual([false, false, true, false, false]);
  });

  it('admits what may be dropped only while its turn is free, and a dropped one takes no turn', () => {
    const clock = new FakeClock();
    const pace = new CallPace(clock, { burst: 3, perSecond: 10 });
    const admits = (n: number) => Array.from({ length: n }, () => pace.admit('a'));
    // Three at once, then nothing: a flood of a thousand more is dropped, told once.
    const first = admits(1003);
    expect(first.slice(0, 3).every((t) => t.admitted)).toBe(true);
    expect(first.slice(3).some((t) => t.admitted)).toBe(false);
    expect(first.filter((t) => t.startsStreak)).toHaveLength(1);
    expect(first[3]!.startsStreak).toBe(true);
    // The dropped ones took nothing: one interval later, one more is let through.
    clock.advance(100);
    expect(admits(2).map((t) => t.admitted)).toEqual([true, false]);
    // Quiet long enough to refill: the burst again, and a new streak is told again.
    clock.advance(1_000);
    const again = admits(4);
    expect(again.map((t) => t.admitted)).toEqual([true, true, true, false]);
    expect(again[3]!.startsStreak).toBe(true);
  });

  it('keeps its turns when the wall clock steps back, without making anyone wait out the step', () => {
    let now = 10_000;
    const pace = new CallPace({ now: () => now }, { burst: 1, perSecond: 10 });
    expect(pace.take('a').waitMs).toBe(0);
    expect(pace.take('a').waitMs).toBe(100);
    // A time sync sets the clock back an hour: the backlog stays, and only the backlog.
    now -= 3_600_000;
    expect(pace.take('a').waitMs).toBe(200);
    now += 1_000;
    expect(pace.take('a').waitMs).toBe(0);
  });

  it('forgets idle connections, so a stream of new names keeps a bounded memory', () => {
    const clock = new FakeClock();
    const pace = new CallPace(clock, { burst: 1, perSecond: 100 });
    for (let i = 0; i < 5_000; i++) {
      pace.take(`client-${i}`);
      clock.advance(20);
    }
    expect(pace.size).toBeLessThanOrEqual(257);
  });

  it('refuses limits that would pace nothing or everything', () => {
    const clock = new FakeClock();
    expect(() => new CallPace(clock, { burst: 0, perSecond: 10 })).toThrow(RangeError);
    expect(() => new CallPace(clock, { burst: 10, perSecond: 0 })).toThrow(RangeError);
    expect(() => new CallPace(clock, { burst: Number.NaN, perSecond: 1 })).toThrow(RangeError);
  });

  it('waits its time, or until the caller stops waiting, and leaves no timer behind', async () => {
    const clock = new FakeClock();
    let done = false;
    const wait = paceWait(clock, 500, undefined).then(() => (done = true));
    clock.advance(499);
    await Promise.resolve();
    expect(done).toBe(false);
    clock.advance(1);
    await wait;
    expect(done).toBe(true);

    const stop = new AbortController();
    const stopped = paceWait(clock, 60_000, stop.signal);
    stop.abort(new Error('gone'));
    await stopped;
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('the gate paces each server', () => {
  let dir: string;
  let audit: AuditLog;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'advent-pace-'));
    audit = await AuditLog.open({ dir: path.join(dir, 'audit') });
  });
  afterEach(async () => {
    await audit.close();
    await rm(dir, { recursive: true, force: true });
  });

  function paced(clock: FakeClock, limits = { burst: 2, perSecond: 10 }) {
    let runs = 0;
    const count: Service = {
      name: 'count',
      title: 'Count',
      description: 'Counts its runs.',
      parameters: { type: 'object', properties: {} },
      risk: 'read',
      timeoutMs: 1000,
      run: async () => ++runs,
    };
    const registry = new Registry();
    registry.add(count);
    const policy = new PolicyStore({
      getPolicies: () => ({}),
      alwaysGrants: () => [],
      persistAlways: async () => undefined,
    });
    const gate = new Dispatcher({
      registry,
      policy: { decide: (q) => policy.decide(q), remember: (k, s) => policy.remember(k, s) },
      broker: new Broker({ clock, ids: seededIds(3), timeoutMs: () => 1000 }),
      audit,
      files: createFilesSandbox({ roots: () => [dir], maxFileBytes: () => 1024 }),
      clock,
      pace: new CallPace(clock, limits),
    });
    const told: GateEvents['callsPaced'][] = [];
    gate.events.on('callsPaced', (e) => told.push(e));
    const started: string[] = [];
    gate.events.on('callStarted', (e) => started.push(e.callId));
    return { gate, told, started, runs: () => runs };
  }

  const call = (callId: string, over: Partial<CallRequest> = {}): CallRequest => ({
    connection: { id: 'p-flood', name: 'Flood' },
    dialect: 'advent',
    callId,
    service: 'count',
    params: {},
    ...over,
  });

  const settle = () => new Promise((r) => setImmediate(r));

  it('holds a call past the pace before it is shown, run or recorded, then runs it in its turn', async () => {
    const clock = new FakeClock();
    const { gate, told, started, runs } = paced(clock);
    const results = ['c1', 'c2', 'c3'].map((id) => gate.dispatch(call(id)));
    await Promise.all(results.slice(0, 2));
    await settle();
    expect(started).toEqual(['c1', 'c2']);
    expect(runs()).toBe(2);
    expect(audit.select({ order: 'asc' })).toHaveLength(2);
    expect(told).toEqual([
      { connection: { id: 'p-flood', name: 'Flood' }, burst: 2, perSecond: 10 },
    ]);
    clock.advance(100);
    expect(await results[2]).toMatchObject({ ok: true, data: 3 });
    expect(started).toEqual(['c1', 'c2', 'c3']);
    expect(audit.select({ order: 'asc' }).map((r) => r.callId)).toEqual(['c1', 'c2', 'c3']);
  });

  it('records a call whose server stopped waiting during its turn as cancelled, and never runs it', async () => {
    const clock = new FakeClock();
    const { gate, runs } = paced(clock, { burst: 1, perSecond: 1 });
    await gate.dispatch(call('c1'));
    const gone = new AbortController();
    const held = gate.dispatch(call('c2', { signal: gone.signal }));
    await settle();
    gone.abort(new Error('the connection it came on ended'));
    expect(await held).toMatchObject({ ok: false, code: 'cancelled' });
    expect(runs()).toBe(1);
    expect(audit.select({ order: 'asc' }).map((r) => [r.callId, r.outcome])).toEqual([
      ['c1', 'ok'],
      ['c2', 'cancelled'],
    ]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('paces every MCP app together, so a new client name per session buys no new burst', async () => {
    const clock = new FakeClock();
    const { gate, started } = paced(clock, { burst: 2, perSecond: 1 });
    const app = (id: string) =>
      gate.dispatch(call(id, { connection: { id: `mcp:app-${id}`, name: id }, dialect: 'mcp' }));
    const results = ['a', 'b', 'c'].map(app);
    await Promise.all(results.slice(0, 2));
    await settle();
    expect(started).toEqual(['a', 'b']);
    // A voice server keeps its own turn meanwhile.
    expect(await gate.dispatch(call('v1'))).toMatchObject({ ok: true });
    clock.advance(1000);
    expect(await results[2]).toMatchObject({ ok: true });
    expect(started).toEqual(['a', 'b', 'v1', 'c']);
  });

  it("never paces the user's own runs", async () => {
    const clock = new FakeClock();
    const { gate, told, runs } = paced(clock, { burst: 1, perSecond: 1 });
    const userRun = (id: string) =>
      gate.dispatch(call(id, { connection: LOCAL_CONNECTION, dialect: 'local', userRun: true }));
    for (const id of ['u1', 'u2', 'u3', 'u4'])
      expect(await userRun(id)).toMatchObject({ ok: true });
    expect(runs()).toBe(4);
    expect(told).toEqual([]);
  });
});
