/**
 * The bridge worker's work (bridge-worker.ts is its thin shell): it holds the bridge's WebSocket
 * for the page, passes every frame on, except reply audio of the reply the page approved, which
 * it posts straight to the playback worklet (renderer/audio/reply-router.ts). Written against
 * small shapes (a scope that posts to the page, a socket factory) so Node tests drive it.
 */
import { ReplyRouter } from '../audio/reply-router.js';
import type { SocketLike } from './socket.js';
import type { FromWorker, ToWorker } from './worker-messages.js';

export interface WorkerScopeLike {
  postMessage(message: FromWorker, transfer?: ArrayBuffer[]): void;
  onmessage: ((ev: { data: ToWorker }) => void) | null;
}

const wallNow = (): number => performance.timeOrigin + performance.now();

export function serveBridgeWorker(
  scope: WorkerScopeLike,
  open: (url: string) => SocketLike,
  now: () => number = wallNow,
): ReplyRouter {
  const router = new ReplyRouter({
    now,
    played: (n) => scope.postMessage({ type: 'direct', ...n }),
  });
  let current: { id: number; socket: SocketLike } | undefined;

  const start = (id: number, url: string): void => {
    current?.socket.close(1000, 'replaced');
    let socket: SocketLike;
    try {
      socket = open(url);
    } catch {
      scope.postMessage({ type: 'close', id, code: 1006, reason: 'could not open' });
      return;
    }
    const mine = { id, socket };
    current = mine;
    socket.binaryType = 'arraybuffer';
    socket.onopen = () => scope.postMessage({ type: 'open', id });
    socket.onerror = () => {
      // A close event always follows.
    };
    socket.onclose = (ev) => {
      if (current === mine) current = undefined;
      scope.postMessage({ type: 'close', id, code: ev.code ?? 1006, reason: ev.reason ?? '' });
    };
    socket.onmessage = (ev) => {
      const data = ev.data;
      if (data instanceof ArrayBuffer) {
        const routed = router.fromSocket(data);
        if (routed.played) return;
        scope.postMessage({ type: 'message', id, data, taskId: routed.taskId }, [data]);
        return;
      }
      if (typeof data === 'string') scope.postMessage({ type: 'message', id, data });
    };
  };

  scope.onmessage = (ev) => {
    const msg = ev.data;
    switch (msg.type) {
      case 'open':
        return start(msg.id, msg.url);
      case 'send':
        if (current?.id === msg.id && current.socket.readyState === 1)
          current.socket.send(msg.data);
        return;
      case 'close':
        if (current?.id !== msg.id) return;
        current.socket.close(msg.code, msg.reason);
        return;
      case 'player':
        return router.attachPlayer(msg.port, msg.rate);
      case 'policy':
        return router.policy(msg);
      case 'handled':
        return router.handled(msg.taskId);
      case 'push':
        return router.push(msg.taskId, msg.sampleRate, msg.pcm);
      case 'flush':
        return router.flush();
    }
  };
  return router;
}
