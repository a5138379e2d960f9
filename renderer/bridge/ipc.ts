/** Electron's bridge: window.agent from the preload. Always "open" while the window lives. */
import {
  type CommandArgs,
  type CommandName,
  type CommandResults,
  type EventName,
  type EventPayloads,
  type Snapshot,
  readCommandError,
} from '../../app/contract/index.js';
import { type Bridge, BridgeError } from './types.js';

/** Electron wraps rejections as "Error invoking remote method 'x': Error: why"; keep the why. */
export function cleanIpcError(err: unknown): BridgeError {
  const { code, params } = readCommandError(err, '');
  let message =
    err instanceof Error
      ? err.message
      : err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string'
        ? (err as { message: string }).message
        : String(err);
  message = message.replace(/^Error invoking remote method '[^']*':\s*/, '');
  message = message.replace(/^(?:[A-Za-z]*Error:\s*)+/, '');
  return new BridgeError(code, message, params);
}

export function createIpcBridge(agent: AgentPreload): Bridge {
  const ready = new Set<(s: Snapshot) => void>();
  let closed = false;

  const invoke = async <K extends CommandName>(
    method: K,
    ...args: CommandArgs<K>
  ): Promise<CommandResults[K]> => {
    try {
      return (await agent.invoke(method, ...(args as unknown[]))) as CommandResults[K];
    } catch (err) {
      throw cleanIpcError(err);
    }
  };

  // The first snapshot once listeners had a chance to attach.
  queueMicrotask(() => {
    void invoke('snapshot').then(
      (snap) => {
        if (!closed) for (const cb of [...ready]) cb(snap);
      },
      (err: unknown) => console.warn('[bridge] snapshot failed', err),
    );
  });

  return {
    invoke,
    on<E extends EventName>(name: E, cb: (payload: EventPayloads[E]) => void): () => void {
      return agent.on(name, cb as (payload: unknown) => void);
    },
    sendAudio(pcm: ArrayBuffer): void {
      void invoke('voiceChunk', pcm).catch(() => {});
    },
    status: 'open',
    onStatus: () => () => {},
    onReady(cb) {
      ready.add(cb);
      return () => {
        ready.delete(cb);
      };
    },
    close(): void {
      closed = true;
    },
  };
}
