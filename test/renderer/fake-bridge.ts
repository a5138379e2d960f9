/**
 * A bridge for the voice controller tests: records every command, answers voiceStart with fresh
 * task ids (optionally held back, to test a slow start), and lets a test emit core events.
 */
import type { EventName, EventPayloads } from '../../app/contract/index.js';
import type { Bridge } from '../../renderer/bridge/types.js';

type Listener = (payload: never) => void;

export function fakeBridge() {
  const calls: { method: string; args: unknown[] }[] = [];
  const sent: ArrayBuffer[] = [];
  const listeners = new Map<string, Set<Listener>>();
  let task = 0;
  let startGate: Promise<void> = Promise.resolve();
  const bridge = {
    status: 'open',
    invoke: async (method: string, ...args: unknown[]) => {
      calls.push({ method, args });
      if (method === 'voiceStart') {
        await startGate;
        return { taskId: `task${++task}` };
      }
      return undefined;
    },
    on: (name: string, cb: Listener) => {
      let set = listeners.get(name);
      if (!set) listeners.set(name, (set = new Set()));
      set.add(cb);
      return () => set.delete(cb);
    },
    sendAudio: (pcm: ArrayBuffer) => sent.push(pcm),
    onStatus: () => () => {},
    onReady: () => () => {},
    close: () => {},
  } as unknown as Bridge;
  const emit = <E extends EventName>(name: E, payload: EventPayloads[E]) => {
    for (const cb of listeners.get(name) ?? []) (cb as (p: EventPayloads[E]) => void)(payload);
  };
  return {
    bridge,
    calls,
    sent,
    emit,
    /** The commands in order, by name. */
    methods: () => calls.map((c) => c.method),
    /** Hold the next voiceStart answers until the returned function is called. */
    holdStart: () => {
      let open!: () => void;
      startGate = new Promise<void>((r) => (open = r));
      return open;
    },
  };
}
