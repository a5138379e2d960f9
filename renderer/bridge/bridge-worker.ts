/**
 * The bridge worker: a dedicated same-origin Worker that holds the bridge's WebSocket for the
 * page and sends reply audio straight to the playback worklet (worker-core.ts). Its socket opens
 * from the page's origin with the page's token, so the host checks it exactly as any bridge.
 */
import type { SocketLike } from './socket.js';
import { serveBridgeWorker, type WorkerScopeLike } from './worker-core.js';

const router = serveBridgeWorker(
  globalThis as unknown as WorkerScopeLike,
  (url) => new WebSocket(url) as unknown as SocketLike,
);
// The voice latency bench reads where reply audio was, hop by hop (test/bench/reply-hops.ts).
(globalThis as unknown as { __adventReplyHops?: unknown }).__adventReplyHops = router.hops;
