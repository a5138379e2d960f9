import { describe, expect, it } from 'vitest';
import type { PendingPrompt, PromptAnswer, PromptResolution } from '../../app/contract/policy.js';
import { seededIds } from '../../app/ids.js';
import {
  Broker,
  FALLBACK_PROMPT_TIMEOUT_MS,
  type PromptRequest,
  REATTACH_GRACE_MS,
} from '../../app/permissions/broker.js';
import { FakeClock } from '../helpers/fake-clock.js';

const T0 = 1_700_000_000_000;
const TIMEOUT = 60_000;

function setup(timeoutMs: () => number = () => TIMEOUT) {
  const clock = new FakeClock(T0);
  const broker = new Broker({ clock, ids: seededIds(7), timeoutMs });
  const prompts: PendingPrompt[] = [];
  const resolved: { id: string; resolution: PromptResolution }[] = [];
  broker.on('prompt', (p) => prompts.push(p));
  broker.on('promptResolved', (r) => resolved.push(r));
  return { clock, broker, prompts, resolved };
}

function request(overrides: Partial<PromptRequest> = {}): PromptRequest {
  return {
    connection: { id: 'conn-1', name: 'Home' },
    service: 'create_file',
    grantKey: 'create_file',
    params: { path: 'notes.txt' },
    summary: 'Create file notes.txt in ~/Documents/Advent Agent',
    resolvedPaths: ['/home/me/Documents/Advent Agent/notes.txt'],
    ...overrides,
  };
}

/** Settle-state probe: a promise's outcome so far, without waiting for it. */
function track<T>(promise: Promise<T>): { value: T | undefined } {
  const box: { value: T | undefined } = { value: undefined };
  void promise.then((v) => (box.value = v));
  return box;
}
const flush = () => new Promise<void>((r) => setImmediate(r));

describe('Broker', () => {
  it("resolves 'cancelled' at once when no answerer is attached, showing nothing and setting no timer", async () => {
    const { broker, clock, prompts, resolved } = setup();
    expect(broker.hasAnswerer()).toBe(false);
    await expect(broker.ask(request())).resolves.toBe('cancelled');
    expect(prompts).toEqual([]);
    expect(resolved).toEqual([]);
    expect(broker.pending()).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('shows the prompt with an id and expiry, and resolves with the answer given', async () => {
    const { broker, clock, prompts, resolved } = setup();
    broker.attach({ name: 'window' });
    const outcome = broker.ask(request());

    expect(prompts).toHaveLength(1);
    const [prompt] = prompts;
    expect(prompt).toMatchObject({ ...request(), expiresAt: T0 + TIMEOUT });
    expect(prompt?.id).toMatch(/^[0-9a-f]{16}$/);
    expect(broker.pending()).toEqual([prompt]);
    expect(clock.pendingTimers()).toBe(1);

    expect(broker.answer(prompt!.id, 'session')).toBe(true);
    await expect(outcome).resolves.toBe('session');
    expect(resolved).toEqual([{ id: prompt!.id, resolution: 'session' }]);
    expect(broker.pending()).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("resolves 'timeout' exactly at expiresAt and clears its timer", async () => {
    const { broker, clock, resolved } = setup();
    broker.attach();
    const outcome = track(broker.ask(request()));

    clock.advance(TIMEOUT - 1);
    await flush();
    expect(outcome.value).toBeUndefined();
    expect(broker.pending()).toHaveLength(1);

    clock.advance(1);
    await flush();
    expect(outcome.value).toBe('timeout');
    expect(resolved.map((r) => r.resolution)).toEqual(['timeout']);
    expect(broker.pending()).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
    expect(broker.answer(resolved[0]!.id, 'once')).toBe(false);
  });

  it('reads the timeout at each ask and falls back to 60 s when it is not a positive number', () => {
    let timeout = 5_000;
    const { broker, prompts } = setup(() => timeout);
    broker.attach();
    void broker.ask(request());
    timeout = Number.NaN;
    void broker.ask(request());
    timeout = -1;
    void broker.ask(request());
    expect(prompts.map((p) => p.expiresAt - T0)).toEqual([
      5_000,
      FALLBACK_PROMPT_TIMEOUT_MS,
      FALLBACK_PROMPT_TIMEOUT_MS,
    ]);
    broker.dispose();
  });

  it('keeps several prompts pending in arrival order, and each resolves independently', async () => {
    const { broker, clock } = setup();
    broker.attach();
    const first = track(broker.ask(request({ summary: 'first' })));
    clock.advance(1_000);
    const second = track(broker.ask(request({ summary: 'second' })));
    const third = track(broker.ask(request({ summary: 'third' })));
    const [p1, p2, p3] = broker.pending();
    expect([p1, p2, p3].map((p) => p?.summary)).toEqual(['first', 'second', 'third']);

    broker.answer(p2!.id, 'deny');
    await flush();
    expect([first.value, second.value, third.value]).toEqual([undefined, 'deny', undefined]);
    expect(broker.pending().map((p) => p.summary)).toEqual(['first', 'third']);

    clock.advance(TIMEOUT - 1_000); // first expires, third still has 1 s left
    await flush();
    expect([first.value, third.value]).toEqual(['timeout', undefined]);

    broker.answer(p3!.id, 'always');
    await flush();
    expect(third.value).toBe('always');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('ignores a second answer and answers for unknown ids or unknown values', async () => {
    const { broker, resolved } = setup();
    broker.attach();
    const outcome = broker.ask(request());
    const [prompt] = broker.pending();

    expect(broker.answer(prompt!.id, 'bogus' as PromptAnswer)).toBe(false);
    expect(broker.answer('no-such-id', 'once')).toBe(false);
    expect(broker.answer(prompt!.id, 'deny')).toBe(true);
    expect(broker.answer(prompt!.id, 'always')).toBe(false);
    await expect(outcome).resolves.toBe('deny');
    expect(resolved).toEqual([{ id: prompt!.id, resolution: 'deny' }]);
  });

  it('lets a listener answer synchronously from the prompt event', async () => {
    const { broker } = setup();
    broker.attach({ name: 'tty' });
    broker.on('prompt', (p) => broker.answer(p.id, 'once'));
    await expect(broker.ask(request())).resolves.toBe('once');
  });

  it('detaching the last answerer cancels every pending prompt after the re-attach grace; detaching one of two does not', async () => {
    const { broker, clock } = setup();
    const detachWindow = broker.attach({ name: 'window' });
    const detachTty = broker.attach({ name: 'tty' });
    expect(broker.answererNames()).toEqual(['window', 'tty']);
    const a = track(broker.ask(request()));
    const b = track(broker.ask(request()));

    detachWindow();
    detachWindow(); // a second call must not count as another detach
    await flush();
    expect(broker.hasAnswerer()).toBe(true);
    expect(broker.pending()).toHaveLength(2);

    detachTty();
    await flush();
    expect(broker.hasAnswerer()).toBe(false);
    expect([a.value, b.value]).toEqual([undefined, undefined]);

    clock.advance(REATTACH_GRACE_MS);
    await flush();
    expect([a.value, b.value]).toEqual(['cancelled', 'cancelled']);
    expect(clock.pendingTimers()).toBe(0);
    await expect(broker.ask(request())).resolves.toBe('cancelled');
  });

  it('a UI that comes back within the grace (a reloaded page) finds the prompt still pending and can answer it', async () => {
    const { broker, clock, resolved } = setup();
    const detachPage = broker.attach({ name: 'browser' });
    const outcome = track(broker.ask(request()));
    const [prompt] = broker.pending();

    detachPage(); // the page reloads
    clock.advance(REATTACH_GRACE_MS - 1);
    await flush();
    expect(outcome.value).toBeUndefined();
    broker.attach({ name: 'browser' }); // the reloaded page is back

    // Long past the grace, the prompt is still there for the page to show and answer.
    clock.advance(REATTACH_GRACE_MS * 4);
    await flush();
    expect(outcome.value).toBeUndefined();
    expect(broker.pending().map((p) => p.id)).toEqual([prompt!.id]);
    expect(resolved).toEqual([]);
    expect(broker.answer(prompt!.id, 'once')).toBe(true);
    await flush();
    expect(outcome.value).toBe('once');
  });

  it('the grace never outlives a prompt: one that expires during it times out at its own expiry', async () => {
    const { broker, clock } = setup(() => 3_000);
    const detach = broker.attach();
    const outcome = track(broker.ask(request()));
    clock.advance(1_000);
    detach();
    clock.advance(1_999);
    await flush();
    expect(outcome.value).toBeUndefined();
    clock.advance(1);
    await flush();
    expect(outcome.value).toBe('timeout');
    expect(broker.pending()).toEqual([]);
  });

  it('a call asking during the grace waits for the UI that is coming back; after the grace one is cancelled at once', async () => {
    const { broker, clock, prompts } = setup();
    broker.attach()();
    const during = track(broker.ask(request({ summary: 'during the reload' })));
    expect(prompts.map((p) => p.summary)).toEqual(['during the reload']);
    clock.advance(REATTACH_GRACE_MS);
    await flush();
    expect(during.value).toBe('cancelled');
    await expect(broker.ask(request())).resolves.toBe('cancelled');
    expect(prompts).toHaveLength(1);
  });

  it('with no grace configured, the last detach cancels at once', async () => {
    const clock = new FakeClock(T0);
    const broker = new Broker({
      clock,
      ids: seededIds(7),
      timeoutMs: () => TIMEOUT,
      reattachGraceMs: 0,
    });
    const detach = broker.attach();
    const outcome = track(broker.ask(request()));
    detach();
    await flush();
    expect(outcome.value).toBe('cancelled');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('cancelWhere cancels only the matching prompts, e.g. those of a dropped connection', async () => {
    const { broker, resolved } = setup();
    broker.attach();
    // Two connections with the same display name: only the dropped one's prompts go.
    const dropped = track(broker.ask(request({ connection: { id: 'conn-1', name: 'Home' } })));
    const live = track(broker.ask(request({ connection: { id: 'conn-2', name: 'Home' } })));

    expect(broker.cancelWhere((p) => p.connection.id === 'conn-1')).toBe(1);
    await flush();
    expect(dropped.value).toBe('cancelled');
    expect(live.value).toBeUndefined();
    expect(broker.pending().map((p) => p.connection.id)).toEqual(['conn-2']);
    expect(resolved.map((r) => r.resolution)).toEqual(['cancelled']);
    broker.dispose();
  });

  it('dispose cancels everything and leaves no timers; later asks are cancelled at once', async () => {
    const { broker, clock } = setup();
    broker.attach();
    const outcomes = [broker.ask(request()), broker.ask(request()), broker.ask(request())];
    expect(clock.pendingTimers()).toBe(3);

    broker.dispose();
    await expect(Promise.all(outcomes)).resolves.toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(clock.pendingTimers()).toBe(0);
    expect(broker.pending()).toEqual([]);
    await expect(broker.ask(request())).resolves.toBe('cancelled');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('hands out frozen prompts so one UI cannot change what another shows', () => {
    const { broker, prompts } = setup();
    broker.attach();
    void broker.ask(request());
    expect(Object.isFrozen(prompts[0])).toBe(true);
    expect(Object.isFrozen(prompts[0]?.resolvedPaths)).toBe(true);
    broker.dispose();
  });
});

describe('FakeClock', () => {
  it('fires due timers in order, including ones set while firing', () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => {
      fired.push(`a@${clock.now()}`);
      clock.setTimeout(() => fired.push(`c@${clock.now()}`), 5);
    }, 10);
    const cleared = clock.setTimeout(() => fired.push('never'), 15);
    clock.clearTimeout(cleared);

    clock.advance(30);
    expect(fired).toEqual(['a@10', 'c@15', 'b@20']);
    expect(clock.now()).toBe(30);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('Broker: a server that stops waiting', () => {
  it("withdraws the prompt when the caller's signal aborts: 'withdrawn', no timer left, a late answer ignored", async () => {
    const { broker, clock, prompts, resolved } = setup();
    broker.attach();
    const server = new AbortController();
    const outcome = track(broker.ask(request(), { signal: server.signal }));
    const id = prompts[0]!.id;
    server.abort();
    await flush();
    expect(outcome.value).toBe('withdrawn');
    expect(resolved).toEqual([{ id, resolution: 'withdrawn' }]);
    expect(broker.pending()).toEqual([]);
    expect(broker.answer(id, 'once')).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('shows nothing for a call already withdrawn, and withdrawWhere ends only the matching prompts', async () => {
    const { broker, prompts } = setup();
    broker.attach();
    await expect(broker.ask(request(), { signal: AbortSignal.abort() })).resolves.toBe('withdrawn');
    expect(prompts).toEqual([]);
    const home = track(broker.ask(request()));
    const work = track(broker.ask(request({ connection: { id: 'conn-2', name: 'Work' } })));
    expect(broker.withdrawWhere((p) => p.connection.id === 'conn-1')).toBe(1);
    await flush();
    expect(home.value).toBe('withdrawn');
    expect(work.value).toBeUndefined();
    expect(broker.pending().map((p) => p.connection.id)).toEqual(['conn-2']);
  });
});
