/**
 * The fetch of MCP servers at an address, bounded like a stdio server (DESIGN §1.7):
 * - each message at most MCP_LIMITS.messageBytes: the SDK reads a JSON answer whole and gathers an
 *   SSE event until its blank line, so a server sending one endless message would otherwise fill
 *   the agent's memory. A JSON body counts whole; an SSE stream counts per event, so a stream open
 *   for days carrying many messages is fine. Past the bound the body fails with a
 *   `MessageTooLarge` naming it and the download stops.
 * - a bounded number of POSTs waiting on the server, each for a bounded time: the SDK posts every
 *   answer to a server's request (a ping) at once, with no limit and no timeout, so a server that
 *   sends requests and never answers the posts ran the agent out of file descriptors within a
 *   second. Past the number the connection fails with a `NotAnswering` naming it.
 * - GETs (the server's standing event stream) paced: the SDK reopens a stream that ended cleanly
 *   after the server's `retry:` (0 if it says so) and counts its retries from 0 again each time, so
 *   a server that ends every stream at once had the agent reopen it ~600 times a second, forever.
 *   A GET waits for a gap after the previous one began (EventStreamPacing), and after streams end
 *   at once too many times in a row the stream is given up (`StreamKeepsEnding`).
 */
import { type Clock, systemClock } from '../../clock.js';

/** A server sent one message over the bound. */
export class MessageTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(
      `it sent a message over ${formatBytes(maxBytes)}, the most one MCP message may be; it was refused`,
    );
    this.name = 'MessageTooLarge';
  }
}

/** A server left too many of our posts waiting at once. */
export class NotAnswering extends Error {
  constructor(readonly maxWaiting: number) {
    super(`it does not answer what the agent sends it (${maxWaiting} messages were left waiting)`);
    this.name = 'NotAnswering';
  }
}

/** A server's event stream ended at once too many times in a row: it is no longer reopened. */
export class StreamKeepsEnding extends Error {
  constructor(
    readonly times: number,
    readonly withinMs: number,
  ) {
    super(
      `its event stream kept ending at once (${times} times in a row, each within ${seconds(withinMs)})`,
    );
    this.name = 'StreamKeepsEnding';
  }
}

export interface EventStreamPacing {
  /** The least time from one GET's start to the next; it doubles with each quick end in a row. */
  firstGapMs: number;
  maxGapMs: number;
  /**
   * A stream that ends sooner than this after its GET began ended "at once"; one that lasts longer
   * starts the gap and the count over (a server may well close a stream now and then).
   */
  quickMs: number;
  /** Quick ends in a row after which the stream is given up. */
  maxQuick: number;
}

/**
 * A server that ends every stream at once is asked 8 times in about 2 minutes, then no more; one
 * that closes its stream every few seconds costs a GET every few seconds.
 */
export const DEFAULT_EVENT_STREAM_PACING: EventStreamPacing = {
  firstGapMs: 1000,
  maxGapMs: 60_000,
  quickMs: 5000,
  maxQuick: 8,
};

export interface EventStreamOptions {
  pacing: EventStreamPacing;
  /** Told once, when the stream is given up: the server's log says why. */
  gaveUp: (err: StreamKeepsEnding) => void;
}

export interface PostLimits {
  /**
   * POSTs waiting on the server at once: from the request until the whole answer is in, or until
   * an event stream has started (a long call's stream belongs to a call the gate started).
   */
  maxWaiting: number;
  /** How long each may wait (read when it is sent: the call timeout may change). */
  timeoutMs: () => number;
  clock?: Clock;
}

/**
 * Generous for any real use (a voice server calls tools one at a time; an MCP client a few at
 * once), small next to the file descriptors a process has.
 */
export const DEFAULT_POST_LIMITS: PostLimits = { maxWaiting: 32, timeoutMs: () => 30_000 };

const LF = 0x0a;
const CR = 0x0d;

/**
 * `base` with every response body bounded, and POSTs limited (PostLimits). `refuse` is told first,
 * so the connection can close itself: the SDK only logs a failed SSE stream or post and would
 * wait for the answer until its timeout.
 */
export function boundedFetch(
  base: typeof fetch,
  maxBytes: number,
  refuse: (err: MessageTooLarge | NotAnswering) => void,
  limits: PostLimits = DEFAULT_POST_LIMITS,
  stream: Partial<EventStreamOptions> = {},
): typeof fetch {
  const clock = limits.clock ?? systemClock;
  const paced = eventStreamPacer(
    clock,
    stream.pacing ?? DEFAULT_EVENT_STREAM_PACING,
    stream.gaveUp ?? (() => undefined),
  );
  let waiting = 0;
  return async (input, init) => {
    // A GET is the server's own event stream, open for as long as the connection (or one resumed).
    if ((init?.method ?? 'GET').toUpperCase() === 'GET')
      return paced(init?.signal ?? undefined, async (ended) =>
        bounded(await base(input, init), maxBytes, refuse, ended),
      );
    if (waiting >= limits.maxWaiting) {
      const err = new NotAnswering(limits.maxWaiting);
      refuse(err);
      throw err;
    }
    waiting += 1;
    const deadline = new AbortController();
    const outer = init?.signal;
    const abort = () => deadline.abort(outer?.reason);
    const ms = limits.timeoutMs();
    const timer = clock.setTimeout(
      () =>
        deadline.abort(new Error(`the server did not answer within ${Math.round(ms / 1000)} s`)),
      ms,
    );
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      waiting -= 1;
      clock.clearTimeout(timer);
      outer?.removeEventListener('abort', abort);
    };
    if (outer?.aborted) abort();
    else outer?.addEventListener('abort', abort, { once: true });
    let response: Response;
    try {
      response = await base(input, { ...init, signal: deadline.signal });
    } catch (err) {
      release();
      throw err;
    }
    // A stream that started is a call under way; anything else waits until it is all in.
    if (!response.body || (response.ok && isEventStream(response))) release();
    return bounded(response, maxBytes, refuse, release);
  };
}

/**
 * Runs each GET no sooner than the gap after the previous one began, and tells how long its stream
 * lasted (`ended`, called when its body is done however it ends, or at once if it has none or
 * failed). Past `maxQuick` quick ends in a row it answers `405 Method Not Allowed` itself: the SDK
 * reads that as "this server offers no event stream" and stops asking.
 */
function eventStreamPacer(
  clock: Clock,
  pacing: EventStreamPacing,
  gaveUp: (err: StreamKeepsEnding) => void,
) {
  let lastStart = -Infinity;
  let quick = 0;
  let given = false;
  return async (
    signal: AbortSignal | undefined,
    open: (ended: () => void) => Promise<Response>,
  ): Promise<Response> => {
    if (quick >= pacing.maxQuick) {
      if (!given) {
        given = true;
        gaveUp(new StreamKeepsEnding(quick, pacing.quickMs));
      }
      return new Response(null, { status: 405, statusText: 'Method Not Allowed' });
    }
    const gap = Math.min(pacing.firstGapMs * 2 ** Math.max(0, quick - 1), pacing.maxGapMs);
    // The slot is taken before waiting, so GETs asked for together are spaced too.
    const start = Math.max(clock.now(), lastStart + gap);
    lastStart = start;
    await sleep(clock, start - clock.now(), signal);
    const began = clock.now();
    let done = false;
    const ended = () => {
      if (done) return;
      done = true;
      quick = clock.now() - began < pacing.quickMs ? quick + 1 : 0;
    };
    let response: Response;
    try {
      response = await open(ended);
    } catch (err) {
      ended();
      throw err;
    }
    // No body to read: the SDK is done with it (it reconnects or gives up by its own count).
    if (!response.body) ended();
    return response;
  };
}

/** Wait `ms` on `clock`; an abort (the connection closing) ends the wait at once, as fetch would. */
function sleep(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const abort = () => {
      clock.clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}

function isEventStream(response: Response): boolean {
  return /^\s*text\/event-stream\s*(;|$)/i.test(response.headers.get('content-type') ?? '');
}

/** `response` with its body bounded; `ended` is told when the body is done, however it ends. */
function bounded(
  response: Response,
  maxBytes: number,
  tooLarge: (err: MessageTooLarge) => void,
  ended: () => void = () => undefined,
): Response {
  if (!response.body) return response;
  const sse = isEventStream(response);
  const over = sse ? sseMeter(maxBytes) : totalMeter(maxBytes);
  const lines = sse ? lfLineEnds() : undefined;
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (err) {
        ended();
        controller.error(err);
        return;
      }
      if (next.done) {
        ended();
        controller.close();
        return;
      }
      if (over(next.value)) {
        const err = new MessageTooLarge(maxBytes);
        tooLarge(err);
        ended();
        controller.error(err);
        // Cancelling the response's own body ends the download.
        void reader.cancel(err).catch(() => undefined);
        return;
      }
      controller.enqueue(lines ? lines(next.value) : next.value);
    },
    cancel(reason) {
      ended();
      return reader.cancel(reason);
    },
  });
  const out = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  // The SDK names the address a redirect came from in its messages.
  Object.defineProperty(out, 'url', { value: response.url });
  return out;
}

function totalMeter(maxBytes: number): (chunk: Uint8Array) => boolean {
  let size = 0;
  return (chunk) => (size += chunk.length) > maxBytes;
}

/**
 * Bytes of the SSE event being received: an event ends at an empty line, lines ending in CRLF, LF
 * or CR (the SSE spec). Checked at every byte, so an event and the next one in a chunk count apart.
 */
export function sseMeter(maxBytes: number): (chunk: Uint8Array) => boolean {
  let size = 0;
  let lineStart = true;
  let afterCR = false;
  return (chunk) => {
    for (let i = 0; i < chunk.length; i += 1) {
      const b = chunk[i]!;
      size += 1;
      if (size > maxBytes) return true;
      if (b === LF && afterCR) {
        // The LF of a CRLF: the CR ended the line already.
        afterCR = false;
        continue;
      }
      afterCR = b === CR;
      if (b !== LF && b !== CR) lineStart = false;
      else if (lineStart) size = 0;
      else lineStart = true;
    }
    return false;
  };
}

/**
 * SSE lines may end in CR alone (the spec allows CR, LF and CRLF), and the SDK's parser
 * (eventsource-parser) searches for the next LF from every CR: a stream of CR-only lines costs it
 * time quadratic in the chunk (measured: 64 KiB of empty CR lines, 23 ms of one core), which a
 * hostile server can send on and on. Every line end becomes a single LF (a CRLF split across two
 * chunks included), which the parser reads in one pass; the events are the same.
 */
export function lfLineEnds(): (chunk: Uint8Array) => Uint8Array {
  let afterCR = false;
  return (chunk) => {
    if (!afterCR && chunk.indexOf(CR) === -1) return chunk;
    const out = new Uint8Array(chunk.length);
    let n = 0;
    for (let i = 0; i < chunk.length; i += 1) {
      const b = chunk[i]!;
      if (b === LF && afterCR) {
        // The LF of a CRLF: its CR is already out as an LF.
        afterCR = false;
        continue;
      }
      afterCR = b === CR;
      out[n++] = afterCR ? LF : b;
    }
    return out.subarray(0, n);
  };
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}

function formatBytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return mb >= 1 ? `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB` : `${bytes} bytes`;
}
