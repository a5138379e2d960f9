/**
 * The fetch of MCP servers at an address, with the bound stdio servers have (MCP_LIMITS.messageBytes
 * per message): the SDK reads a JSON answer whole and gathers an SSE event until its blank line,
 * so a server sending one endless message would otherwise fill the agent's memory. A JSON body
 * counts whole; an SSE stream counts per event, so a stream open for days carrying many messages
 * is fine. Past the bound the body fails with a `MessageTooLarge` naming it and the download stops.
 */

/** A server sent one message over the bound. */
export class MessageTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(
      `it sent a message over ${formatBytes(maxBytes)}, the most one MCP message may be; it was refused`,
    );
    this.name = 'MessageTooLarge';
  }
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * `base` with every response body bounded. `tooLarge` is told first, so the connection can close
 * itself: the SDK only logs a failed SSE stream and would wait for the answer until its timeout.
 */
export function boundedFetch(
  base: typeof fetch,
  maxBytes: number,
  tooLarge: (err: MessageTooLarge) => void,
): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body) return response;
    const type = response.headers.get('content-type') ?? '';
    const sse = /^\s*text\/event-stream\s*(;|$)/i.test(type);
    const over = sse ? sseMeter(maxBytes) : totalMeter(maxBytes);
    const lines = sse ? lfLineEnds() : undefined;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (over(chunk)) {
            const err = new MessageTooLarge(maxBytes);
            tooLarge(err);
            // Erroring the stream cancels the response's own body, which ends the download.
            controller.error(err);
            return;
          }
          controller.enqueue(lines ? lines(chunk) : chunk);
        },
      }),
    );
    const bounded = new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // The SDK names the address a redirect came from in its messages.
    Object.defineProperty(bounded, 'url', { value: response.url });
    return bounded;
  };
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
