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
): typeof fetch {
  const clock = limits.clock ?? systemClock;
  let waiting = 0;
  return async (input, init) => {
    // The one GET is the server's own event stream, open for as long as the connection.
    if ((init?.method ?? 'GET').toUpperCase() === 'GET')
      return bounded(await base(input, init), maxBytes, refuse);
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

function formatBytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return mb >= 1 ? `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB` : `${bytes} bytes`;
}
