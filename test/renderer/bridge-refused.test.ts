/**
 * A page whose address carries no key or an old one: the agent serves the page but refuses its
 * bridge, which a browser reports only as a close before open. The bridge must say so (status
 * 'refused') instead of "connecting" forever, and must not mistake an agent that is down for it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSocketBridge, type SocketLike } from '../../renderer/bridge/socket.js';
import type { Bridge, BridgeStatus } from '../../renderer/bridge/types.js';

class RefusedSocket implements SocketLike {
  binaryType = 'blob';
  readyState = 0;
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: { code?: number; reason?: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  send(): void {
    throw new Error('not open');
  }
  close(): void {
    this.readyState = 3;
  }
  /** What a browser shows for a 403 at the upgrade: an error, then close 1006, never open. */
  refuse(): void {
    this.readyState = 3;
    this.onerror?.({});
    this.onclose?.({ code: 1006 });
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
}

function harness(serverAnswers: () => Promise<boolean>) {
  const sockets: RefusedSocket[] = [];
  const timers: (() => void)[] = [];
  const statuses: BridgeStatus[] = [];
  const bridge = createSocketBridge({
    url: 'ws://127.0.0.1:1234/bridge?token=old',
    open: () => {
      const s = new RefusedSocket();
      sockets.push(s);
      return s;
    },
    setTimer: (fn) => {
      timers.push(fn);
      return fn;
    },
    clearTimer: () => {},
    random: () => 0.5,
    serverAnswers,
  });
  bridge.onStatus((s) => statuses.push(s));
  const last = () => sockets[sockets.length - 1] as RefusedSocket;
  return { bridge, sockets, timers, statuses, last };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

let open: Bridge | undefined;
afterEach(() => open?.close());

describe('socket bridge: a refused key', () => {
  it('says the key is refused once the agent answers the page but keeps refusing the bridge, and stops retrying', async () => {
    const h = harness(async () => true);
    open = h.bridge;
    h.last().refuse();
    await flush();
    // One refusal could be a blip: it tries again first.
    expect(h.bridge.status).toBe('closed');
    expect(h.timers).toHaveLength(1);
    h.timers.shift()?.();
    h.last().refuse();
    await flush();
    expect(h.bridge.status).toBe('refused');
    expect(h.statuses.at(-1)).toBe('refused');
    expect(h.timers).toHaveLength(0);
    await expect(h.bridge.invoke('snapshot')).rejects.toMatchObject({ code: 'not_connected' });
  });

  it('keeps reconnecting while the agent itself is down (its page does not answer either)', async () => {
    const h = harness(async () => false);
    open = h.bridge;
    for (let i = 0; i < 5; i++) {
      h.last().refuse();
      await flush();
      expect(h.bridge.status).toBe('closed');
      expect(h.timers).toHaveLength(1);
      h.timers.shift()?.();
    }
    expect(h.sockets).toHaveLength(6);
  });

  it('a probe that fails counts as the agent being down, not as a refusal', async () => {
    const h = harness(() => Promise.reject(new Error('fetch failed')));
    open = h.bridge;
    h.last().refuse();
    await flush();
    h.timers.shift()?.();
    h.last().refuse();
    await flush();
    expect(h.bridge.status).toBe('closed');
    expect(h.timers).toHaveLength(1);
  });

  it('a socket that opened and later dropped is a lost connection, never a refused key', async () => {
    let probes = 0;
    const h = harness(async () => {
      probes += 1;
      return true;
    });
    open = h.bridge;
    h.last().open();
    h.last().refuse();
    await flush();
    expect(probes).toBe(0);
    expect(h.bridge.status).toBe('closed');
    expect(h.timers).toHaveLength(1);
  });
});
