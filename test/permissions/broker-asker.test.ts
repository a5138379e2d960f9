import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PendingPrompt, PromptResolution } from '../../app/contract/policy.js';
import { seededIds } from '../../app/ids.js';
import { type Asker, Broker, type PromptRequest } from '../../app/permissions/broker.js';
import { FakeClock } from '../helpers/fake-clock.js';

function setup() {
  const broker = new Broker({
    clock: new FakeClock(1_700_000_000_000),
    ids: seededIds(3),
    timeoutMs: () => 60_000,
  });
  const resolved: { id: string; resolution: PromptResolution }[] = [];
  broker.on('promptResolved', (r) => resolved.push(r));
  return { broker, resolved };
}

const request: PromptRequest = {
  connection: { id: 'mcp:client', name: 'client' },
  service: 'create_file',
  grantKey: 'create_file',
  params: { filename: 'a.txt' },
  summary: 'Create file a.txt',
  resolvedPaths: [path.join(os.tmpdir(), 'Advent Agent', 'a.txt')],
};

/** An asker (the caller's own UI) that answers every question with `answer`. */
const answering = (answer: unknown): Asker => ({
  ask: (_prompt: PendingPrompt) => Promise.resolve(answer as 'once'),
});

describe('Broker with a caller-side asker (no window open)', () => {
  it('an asker\'s "session" allows that one call only: the prompt resolves as "once", so nothing is remembered', async () => {
    const { broker, resolved } = setup();
    await expect(broker.ask(request, { asker: answering('session') })).resolves.toBe('once');
    expect(resolved.map((r) => r.resolution)).toEqual(['once']);
  });

  it('an asker\'s "once" and "deny" stand; an "always" or anything else is no answer', async () => {
    const { broker } = setup();
    await expect(broker.ask(request, { asker: answering('once') })).resolves.toBe('once');
    await expect(broker.ask(request, { asker: answering('deny') })).resolves.toBe('deny');
    await expect(broker.ask(request, { asker: answering('always') })).resolves.toBe('cancelled');
    await expect(broker.ask(request, { asker: answering('yes') })).resolves.toBe('cancelled');
  });

  it('a window that answers first may still grant for the session', async () => {
    const { broker } = setup();
    const never: Asker = { ask: () => new Promise(() => undefined) };
    broker.attach({ name: 'window' });
    const outcome = broker.ask(request, { asker: never });
    broker.answer(broker.pending()[0]!.id, 'session');
    await expect(outcome).resolves.toBe('session');
  });
});
