/**
 * The browser host's bridge: ws(s)://<host>/bridge?token=… The host opens the page with the
 * per-launch token in the query; it is kept in sessionStorage (a reload still works) and removed
 * from the visible URL so it is not copied, bookmarked or shown in screenshots.
 */
import { BRIDGE_PATH } from '../../app/contract/index.js';
import BridgeWorker from './bridge-worker.ts?worker';
import { createSocketBridge, type SocketLike } from './socket.js';
import type { Bridge } from './types.js';
import { type WorkerLine, type WorkerLike, createWorkerLine } from './worker-socket.js';

const TOKEN_KEY = 'advent-agent.bridge-token';

export function takeToken(): string {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    try {
      window.sessionStorage.setItem(TOKEN_KEY, fromUrl);
    } catch {
      // Storage may be disabled; the token still works for this page's life.
    }
    url.searchParams.delete('token');
    window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash);
    return fromUrl;
  }
  try {
    return window.sessionStorage.getItem(TOKEN_KEY) ?? '';
  } catch {
    return '';
  }
}

export function bridgeUrl(token: string): string {
  const scheme = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${window.location.host}${BRIDGE_PATH}?token=${encodeURIComponent(token)}`;
}

const pageSocket = (url: string): SocketLike => new WebSocket(url) as unknown as SocketLike;

/**
 * The bridge's socket in a worker of its own, so reply audio reaches the player while the page
 * renders; a page that cannot start one keeps the socket itself.
 */
function workerLine(): WorkerLine | undefined {
  try {
    return createWorkerLine(new BridgeWorker() as unknown as WorkerLike, pageSocket);
  } catch (err) {
    console.warn('[bridge] no bridge worker; reply audio goes through the page', err);
    return undefined;
  }
}

export function createWsBridge(): Bridge {
  const line = workerLine();
  return createSocketBridge({
    url: bridgeUrl(takeToken()),
    open: line ? (url) => line.open(url) : pageSocket,
    replies: line?.replies,
    log: (message, detail) => console.warn(`[bridge] ${message}`, detail ?? ''),
    serverAnswers: async () => {
      const res = await fetch(new URL('/', window.location.href), {
        method: 'HEAD',
        cache: 'no-store',
      });
      return res.ok;
    },
  });
}
