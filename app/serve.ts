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

/**
 * Commands one UI may have running at once; more wait their turn, up to MAX_UI_CALLS_WAITING,
 * and past that are refused (`busy`). A page that holds the token is still a page: one sending
 * thousands of audit searches at once held gigabytes and stalled every other window.
 */
export const MAX_UI_CALLS_RUNNING = 16;
export const MAX_UI_CALLS_WAITING = 256;

export function serveContract(api: ServedApi, port: ContractPort): ContractServer {
  const offs = EVENT_NAMES.map((name) =>
    api.events.on(name, (payload) => port.send(name, payload as EventPayloads[typeof name])),
  );
  const detach = port.answersPrompts === false ? undefined : api.attachUi(port.name);
  let disposed = false;
  let running = 0;
  /** Calls waiting for a turn, in arrival order; each is resolved to run, or to give up. */
  const waiting: ((run: boolean) => void)[] = [];
  const next = (): void => {
    running -= 1;
    const turn = waiting.shift();
    if (turn) {
      running += 1;
      turn(true);
    }
  };
  const turn = (): Promise<boolean> | boolean => {
    if (running < MAX_UI_CALLS_RUNNING) {
      running += 1;
      return true;
    }
    if (waiting.length >= MAX_UI_CALLS_WAITING) return false;
    return new Promise<boolean>((resolve) => waiting.push(resolve));
  };
  const busy: CallReply = {
    ok: false,
    error: {
      code: 'busy',
      message: `this window has ${MAX_UI_CALLS_RUNNING + MAX_UI_CALLS_WAITING} commands running or waiting; this one was not run`,
    },
  };
  const gone: CallReply = {
    ok: false,
    error: { code: 'connection_lost', message: 'the window went away before this ran' },
  };
  async function run(method: unknown, args: unknown): Promise<CallReply> {
    // An optional argument left out may arrive as undefined (IPC's structured clone keeps it).
    const list = Array.isArray(args) ? [...(args as unknown[])] : args;
    if (Array.isArray(list)) while (list.length && list[list.length - 1] === undefined) list.pop();
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
  }

  return {
    async call(method, args) {
      const mine = turn();
      const ran = mine === true || mine === false ? mine : await mine;
      if (!ran) return disposed ? gone : busy;
      try {
        return await run(method, args);
      } finally {
        next();
      }
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      for (const off of offs) off();
      detach?.();
      // Nobody is left to read their answers: what has not started never starts.
      for (const give of waiting.splice(0)) give(false);
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
