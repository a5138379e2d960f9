/**
 * The WebSocket side of the ReconnectingLink (XiaoZhi device, XiaoZhi MCP endpoint, robot):
 *
 * - The URL (and headers) are read on every dial, so a token changed in settings is used.
 * - A URL that cannot be dialled at all is a configuration error: offline, never retried.
 * - A refused upgrade with HTTP 401/403 is a refused login: offline with the server's status.
 *   Other refusals (503…) are retried like any failure.
 * - Secrets in the URL (`?token=`) never reach a state message or a log line (`redactUrl`).
 */
import WebSocket from 'ws';
import {
  DEFAULT_LINK_TIMING,
  DialError,
  type Dialer,
  type LinkSocket,
  type LinkTiming,
  type Refusal,
  type SocketEvents,
} from './link.js';

/** A WebSocket link's timing is the link's timing (the name the WebSocket dialects know). */
export type WsTiming = LinkTiming;
export const DEFAULT_WS_TIMING: WsTiming = DEFAULT_LINK_TIMING;

/** One WebSocket message as it arrived. */
export type WsMessage = { kind: 'text'; text: string } | { kind: 'binary'; data: Buffer };

export interface WsDialerOptions {
  /** Read on every (re)connect, so a token changed in settings is picked up. */
  url: () => Promise<string> | string;
  headers?: () => Promise<Record<string, string>> | Record<string, string>;
  /** Larger incoming messages close the socket (ws answers 1009). */
  maxMessageBytes?: number;
}

/** Thrown by `url()`/`headers()` for settings that cannot work: offline, not retried. */
export class LinkConfigError extends Error {}

export class WsDialer implements Dialer<WsMessage> {
  constructor(private readonly options: WsDialerOptions) {}

  async dial(events: SocketEvents<WsMessage>): Promise<LinkSocket> {
    let url: string;
    let headers: Record<string, string>;
    try {
      url = await this.options.url();
      headers = (await this.options.headers?.()) ?? {};
      new URL(url); // throws on a malformed URL
      if (!/^wss?:$/.test(new URL(url).protocol))
        throw new LinkConfigError(`'${redactUrl(url)}' is not a ws:// or wss:// address`);
    } catch (err) {
      // A settings function or the URL parser may quote the URL, token included.
      throw new DialError(
        redactText(
          err instanceof LinkConfigError
            ? err.message
            : `cannot connect: ${(err as Error).message}`,
        ),
        'config',
      );
    }

    let socket: WebSocket;
    try {
      socket = new WebSocket(url, {
        headers,
        maxPayload: this.options.maxMessageBytes ?? 16 * 1024 * 1024,
        perMessageDeflate: false,
      });
    } catch (err) {
      // ws quotes the whole address in some of its errors ("Invalid URL: …").
      throw new DialError(
        `cannot connect to ${redactUrl(url)}: ${redactText((err as Error).message)}`,
        'config',
      );
    }

    let lastError = '';
    let refusal: Refusal | undefined;
    socket.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      const text = `the server refused the connection (HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''})`;
      if (status === 401 || status === 403) refusal = { reason: 'auth_failed', message: text };
      else lastError = text;
      socket.terminate();
    });
    socket.on('open', () => events.open());
    socket.on('message', (data, isBinary) => {
      const buf = toBuffer(data);
      events.data(
        isBinary ? { kind: 'binary', data: buf } : { kind: 'text', text: buf.toString('utf8') },
      );
    });
    socket.on('pong', () => events.pong());
    socket.on('error', (err) => {
      // 'close' follows; keep the first reason (terminate() adds one of its own).
      if (!lastError && !refusal) lastError = describeSocketError(err);
    });
    socket.on('close', (code, reason) => {
      const why =
        lastError ||
        `the server closed the connection (${code}${reason.length ? ` ${reason.toString('utf8').slice(0, 200)}` : ''})`;
      events.closed(refusal?.message ?? why, refusal);
    });

    return {
      send: (data) => {
        // The callback runs once the bytes are handed to the socket: the buffer may have drained.
        socket.send(data, { binary: typeof data !== 'string' }, () => events.drain());
      },
      get bufferedBytes() {
        return socket.bufferedAmount;
      },
      pause: () => socket.pause(),
      resume: () => socket.resume(),
      ping: () => {
        if (socket.readyState === WebSocket.OPEN) socket.ping();
      },
      close: (code, reason) => {
        if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
        else if (socket.readyState === WebSocket.OPEN) socket.close(code, reason);
      },
      destroy: () => {
        if (socket.readyState !== WebSocket.CLOSED) socket.terminate();
      },
    };
  }
}

/** Query parameter names whose values are secrets (`token`, `access_token`, `api_key`, `sig`…). */
const SECRET_PARAM = /token|auth|key|secret|pass|jwt|sig|credential/i;

/** The URL with the values of secret-looking query parameters replaced, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    for (const key of [...new Set(u.searchParams.keys())]) {
      if (SECRET_PARAM.test(key)) u.searchParams.set(key, '***');
    }
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url
      .replace(
        /([?&][^=&#]*(?:token|auth|key|secret|pass|jwt|sig|credential)[^=&#]*=)[^&#\s]*/gi,
        '$1***',
      )
      .replace(/(\/\/[^/:@\s]*:)[^/@\s]*@/, '$1***@');
  }
}

/** Every ws/wss/http/https URL inside a free text (an error message) passed through `redactUrl`. */
export function redactText(text: string): string {
  // A URL in prose ends at a space, a quote or a closing parenthesis (`(see ws://…)`).
  return text.replace(/\b(?:wss?|https?):\/\/[^\s'"<>()]+/gi, (u) => redactUrl(u));
}

function toBuffer(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

function describeSocketError(err: Error & { code?: string }): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'the server is not accepting connections (connection refused)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the server name could not be found';
    case 'ETIMEDOUT':
      return 'the server did not answer in time';
    default:
      return redactText(err.message);
  }
}
