/**
 * The browser host's server (DESIGN §4): the built renderer over HTTP and the WebSocket bridge,
 * on 127.0.0.1 only. Three checks keep other pages and other users away from the agent:
 *   - Host must be 127.0.0.1:PORT or localhost:PORT, so a DNS-rebinding site gets 403;
 *   - the bridge needs the per-launch token from the printed URL (compared in constant time);
 *   - the bridge's Origin must be this server's own, so no other site can open it from a browser.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { BRIDGE_PATH } from '../../app/contract/bridge.js';
import { type IdSource, cryptoIds } from '../../app/ids.js';
import { type BridgeApi, serveBridgeSocket } from './bridge-socket.js';
import { securityHeaders, serveStatic } from './static-files.js';

export type { BridgeApi } from './bridge-socket.js';

export interface UiServerOptions {
  api: BridgeApi;
  /** 0 (default) picks a free port. */
  port?: number;
  /** The built renderer (dist/renderer). */
  staticDir: string;
  /** The bridge's key; a fresh random one by default. At least 32 URL-safe characters. */
  token?: string;
  /** Randomness for the token (injected for tests). */
  ids?: IdSource;
  /** Where problems worth a line go; stderr by default. */
  log?: (line: string) => void;
  /** Bridge backpressure limits (tests). */
  audioHighWaterBytes?: number;
  maxBufferedBytes?: number;
}

export interface UiServer {
  /** The page's address with its token: what the user opens. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** The bound address (always 127.0.0.1). */
  address(): AddressInfo;
  /** Close every bridge socket and the server; resolves once no handle is left. */
  close(): Promise<void>;
}

export const LOOPBACK = '127.0.0.1';
/** Voice chunks are a few KB and calls are small; anything near this is not a real page. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/**
 * What another local process can hold open here without the token: connections (each gets 10 s
 * to send its headers), and bridge sockets (a page each: tabs of the one user). Past these a new
 * one is turned away, so nobody can take every file handle of the agent.
 */
export const MAX_CONNECTIONS = 64;
export const MAX_BRIDGE_SOCKETS = 16;
const HEADERS_TIMEOUT_MS = 10_000;
const TOKEN_HEX_CHARS = 64;
/** How long close() lets pages answer the close handshake before cutting them off. */
const CLOSE_GRACE_MS = 500;

export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const token = options.token ?? (options.ids ?? cryptoIds).hex(TOKEN_HEX_CHARS);
  if (!/^[A-Za-z0-9_-]{32,}$/.test(token))
    throw new Error('the UI token must be at least 32 URL-safe characters');
  const log = options.log ?? ((line: string) => process.stderr.write(`advent-agent: ${line}\n`));
  let port = 0;

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_MESSAGE_BYTES,
    perMessageDeflate: false,
  });
  wss.on('connection', (ws) =>
    serveBridgeSocket(ws, options.api, {
      log,
      audioHighWaterBytes: options.audioHighWaterBytes,
      maxBufferedBytes: options.maxBufferedBytes,
    }),
  );

  const server: Server = createServer((req, res) => {
    if (!hostAllowed(req, port)) {
      res.writeHead(403, {
        ...securityHeaders(port),
        'Content-Type': 'text/plain; charset=utf-8',
        'Cache-Control': 'no-store',
      });
      res.end('forbidden: open the address the agent printed\n');
      return;
    }
    serveStatic(req, res, { root: options.staticDir, port }).catch((err: unknown) => {
      log(`serving ${req.url ?? ''} failed: ${(err as Error).message}`);
      res.destroy();
    });
  });

  server.maxConnections = MAX_CONNECTIONS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Errors on a socket we are refusing must not reach the process.
    socket.on('error', () => socket.destroy());
    const refusal = refuseUpgrade(req, port, token);
    if (refusal) return abortHandshake(socket, refusal.status, refusal.reason);
    if (wss.clients.size >= MAX_BRIDGE_SOCKETS)
      return abortHandshake(socket, 503, `${MAX_BRIDGE_SOCKETS} pages are open already`);
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException): void => {
      reject(
        new Error(
          err.code === 'EADDRINUSE'
            ? `port ${options.port} on ${LOOPBACK} is already in use; pick another with --port`
            : `cannot listen on ${LOOPBACK}:${options.port ?? 0}: ${err.message}`,
        ),
      );
    };
    server.once('error', failed);
    server.listen({ port: options.port ?? 0, host: LOOPBACK, exclusive: true }, () => {
      server.off('error', failed);
      resolve();
    });
  });
  server.on('error', (err) => log(`the UI server failed: ${err.message}`));
  port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${LOOPBACK}:${port}/?token=${token}`,
    port,
    token,
    address: () => server.address() as AddressInfo,
    close: () => (closing ??= closeAll(server, wss)),
  };
}

function hostAllowed(req: IncomingMessage, port: number): boolean {
  const host = req.headers.host?.toLowerCase();
  return host === `${LOOPBACK}:${port}` || host === `localhost:${port}`;
}

/** Why an upgrade is refused, checked before the socket is accepted; undefined lets it through. */
function refuseUpgrade(
  req: IncomingMessage,
  port: number,
  token: string,
): { status: number; reason: string } | undefined {
  if (!hostAllowed(req, port)) return { status: 403, reason: 'wrong host' };
  const url = new URL(req.url ?? '/', `http://${LOOPBACK}:${port}`);
  if (url.pathname !== BRIDGE_PATH) return { status: 404, reason: 'not found' };
  const origin = req.headers.origin;
  if (origin !== `http://${LOOPBACK}:${port}` && origin !== `http://localhost:${port}`)
    return { status: 403, reason: 'wrong origin' };
  const given = url.searchParams.get('token');
  if (given === null || !sameSecret(given, token)) return { status: 403, reason: 'wrong token' };
  return undefined;
}

/** Constant time whatever the lengths: compare digests, which always have the same size. */
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

const STATUS_TEXT: Record<number, string> = { 404: 'Not Found', 503: 'Service Unavailable' };

function abortHandshake(socket: Duplex, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Forbidden'}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: text/plain; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

async function closeAll(server: Server, wss: WebSocketServer): Promise<void> {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sockets = [...wss.clients];
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          if (ws.readyState === ws.CLOSED) return resolve();
          const timer = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
          ws.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
          ws.close(1001, 'the agent is shutting down');
        }),
    ),
  );
  await new Promise<void>((resolve) => wss.close(() => resolve()));
  server.closeAllConnections();
  await stopped;
}
