/**
 * One UI's commands through serveContract: a page that holds the token is still a page, and one
 * sending thousands of commands at once must not hold the core's memory or stall other windows.
 */
import { describe, expect, it } from 'vitest';
import type { EventPayloads } from '../app/contract/commands.js';
import { Emitter } from '../app/events.js';
import {
  MAX_UI_CALLS_RUNNING,
  MAX_UI_CALLS_WAITING,
  type ServedApi,
  serveContract,
} from '../app/serve.js';

/** An api whose getSettings waits until released; counts how many ran. */
function slowApi() {
  const releases: (() => void)[] = [];
  let started = 0;
  const api = {
    events: new Emitter<EventPayloads>(),
    attachUi: () => () => undefined,
    getSettings: () =>
      new Promise((resolve) => {
        started += 1;
        releases.push(() => resolve({}));
      }),
  } as unknown as ServedApi;
  return { api, releases, started: () => started };
}

const port = { name: 'page', send: () => undefined };
const settle = () => new Promise((r) => setImmediate(r));

describe('commands from one window', () => {
  it('run a bounded number at once, queue a bounded number, and refuse the rest as busy', async () => {
    const { api, releases, started } = slowApi();
    const server = serveContract(api, port);
    const total = MAX_UI_CALLS_RUNNING + MAX_UI_CALLS_WAITING + 10;
    const replies = Array.from({ length: total }, () => server.call('getSettings', []));
    await settle();
    expect(started()).toBe(MAX_UI_CALLS_RUNNING);
    const refused = await Promise.all(replies.slice(-10));
    for (const r of refused) expect(r).toMatchObject({ ok: false, error: { code: 'busy' } });

    // As each ends, the next waiting one starts: all that were taken are answered.
    while (releases.length) {
      releases.shift()!();
      await settle();
    }
    const answered = await Promise.all(replies.slice(0, -10));
    expect(answered.every((r) => r.ok)).toBe(true);
    expect(started()).toBe(MAX_UI_CALLS_RUNNING + MAX_UI_CALLS_WAITING);
  });

  it('once the window is gone, what waited never runs', async () => {
    const { api, releases, started } = slowApi();
    const server = serveContract(api, port);
    const replies = Array.from({ length: MAX_UI_CALLS_RUNNING + 5 }, () =>
      server.call('getSettings', []),
    );
    await settle();
    server.dispose();
    const late = await Promise.all(replies.slice(MAX_UI_CALLS_RUNNING));
    for (const r of late)
      expect(r).toMatchObject({ ok: false, error: { code: 'connection_lost' } });
    for (const release of releases.splice(0)) release();
    await Promise.all(replies);
    expect(started()).toBe(MAX_UI_CALLS_RUNNING);
  });

  it('a second window is not held back by the first', async () => {
    const first = slowApi();
    const flooded = serveContract(first.api, port);
    for (let i = 0; i < MAX_UI_CALLS_RUNNING + 50; i += 1) void flooded.call('getSettings', []);
    const other = serveContract(first.api, { name: 'other', send: () => undefined });
    const reply = other.call('getSettings', []);
    await settle();
    expect(first.started()).toBe(MAX_UI_CALLS_RUNNING + 1);
    first.releases.at(-1)!();
    expect(await reply).toMatchObject({ ok: true });
    flooded.dispose();
    for (const release of first.releases.splice(0)) release();
  });
});
