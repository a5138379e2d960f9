/**
 * The contract served to one UI over any channel (DESIGN §4), the way VS Code's channel server
 * serves any protocol: Electron's IPC and the browser bridge each give a port, and this is the
 * only code that turns a call into a CoreApi method. Every call's name and arguments are checked
 * against the contract's schemas first; every failure becomes a CommandError with a stable code
 * (the core's refusals keep theirs); every event goes to the port; and while the port lives the
 * UI counts as one that can answer permission prompts.
 */
import {
  type AgentApi,
  type CommandError,
  EVENT_NAMES,
  type EventName,
  type EventPayloads,
} from './contract/commands.js';
import { CommandRefusal } from './contract/errors.js';
import { checkCommand } from './contract/validate.js';
import type { Emitter } from './events.js';

/** What a host serves: the contract, its events, and prompt answering. */
export interface ServedApi extends AgentApi {
  readonly events: Emitter<EventPayloads>;
  /** Register a UI able to answer prompts; returns its detach function. */
  attachUi(name: string): () => void;
}

/** One UI's end of a channel. */
export interface ContractPort {
  /** Who is attached, for logs ("window", "browser page"). */
  readonly name: string;
  /** Deliver an event to this UI (the port decides how: IPC message, JSON or binary frame). */
  send<E extends EventName>(name: E, payload: EventPayloads[E]): void;
  /**
   * Whether this UI answers permission prompts while the port lives (default true). Electron
   * ties answering to the window's own lifetime instead.
   */
  readonly answersPrompts?: boolean;
}

export type CallReply = { ok: true; value: unknown } | { ok: false; error: CommandError };

export interface ContractServer {
  /** Run one call; never throws (a failure is a reply with a code). */
  call(method: unknown, args: unknown): Promise<CallReply>;
  /** The UI went away: no more events, no longer an answerer. Safe to call twice. */
  dispose(): void;
}

export function serveContract(api: ServedApi, port: ContractPort): ContractServer {
  const offs = EVENT_NAMES.map((name) =>
    api.events.on(name, (payload) => port.send(name, payload as EventPayloads[typeof name])),
  );
  const detach = port.answersPrompts === false ? undefined : api.attachUi(port.name);
  let disposed = false;
  return {
    async call(method, args) {
      // An optional argument left out may arrive as undefined (IPC's structured clone keeps it).
      const list = Array.isArray(args) ? [...(args as unknown[])] : args;
      if (Array.isArray(list))
        while (list.length && list[list.length - 1] === undefined) list.pop();
      try {
        // Inside the try too: this never rejects, whatever the caller sent.
        const checked = checkCommand(method, list);
        if (!checked.ok)
          return { ok: false, error: { code: checked.code, message: checked.message } };
        const fn = api[checked.name] as (...a: unknown[]) => Promise<unknown>;
        return { ok: true, value: await fn.apply(api, checked.args) };
      } catch (err) {
        return { ok: false, error: commandErrorOf(err) };
      }
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      for (const off of offs) off();
      detach?.();
    },
  };
}

/** A thrown value as the UI receives it: the core's refusals keep their code and params. */
export function commandErrorOf(err: unknown): CommandError {
  if (err instanceof CommandRefusal)
    return { code: err.code, message: err.message, params: { ...err.params } };
  const message =
    err instanceof Error && err.message
      ? err.message
      : typeof err === 'string' && err
        ? err
        : 'the command failed';
  return { code: 'failed', message };
}
