/**
 * What the two WebSocket simulators that take the upgrade themselves (XiaoZhi B and the MCP
 * endpoint B′) share: reading the upgrade's path, refusing one the way the real servers do, and
 * the open connections with their sockets and timers, cleaned up on close and cut on `stop()`.
 * (The robot simulator lets `ws` route its single path and keeps its timers in its connections.)
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type WebSocket from 'ws';
import { closeServer } from './listen.js';
import type { TimerSet } from './timers.js';

/**
 * Make `server` a WebSocket server that routes its own upgrades: each goes to `upgrade` (which
 * checks path and token, then hands it to the returned `ws` server), and a plain HTTP request is
 * answered 426 with `hint`. Frames up to 16 MiB, well above anything either protocol sends.
 */
export function serveUpgrades(
  server: Server,
  hint: string,
  upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  server.on('upgrade', upgrade);
  server.on('request', (_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' }).end(hint);
  });
  return wss;
}

/** The upgrade's URL (for its query) and its path with a trailing slash, as servers compare it. */
export function upgradeTarget(req: IncomingMessage): { url: URL; path: string } {
  const url = new URL(req.url ?? '/', 'http://sim');
  const path = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
  return { url, path };
}

/** Answer an upgrade with a bare HTTP error and close, as the real servers refuse one. */
export function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** The `ws` server (made with `noServer`) and then the HTTP server; resolves once closed. */
export function closeWsServer(server: Server, wss: WebSocketServer): Promise<void> {
  wss.close();
  // Keep-alive sockets would hold `close()` open.
  server.closeAllConnections?.();
  return closeServer(server);
}

/** One open connection: the simulator's side of it, its socket and every timer it set. */
export interface OpenConn<C> {
  conn: C;
  socket: WebSocket;
  timers: TimerSet;
}

/**
 * The open connections by number. A closed socket takes its connection out (told via
 * `closedNow()`, its timers cleared); `closeAll()` does the same for every one at `stop()`.
 */
export class OpenConns<C extends { closedNow(): void }> {
  private readonly open = new Map<number, OpenConn<C>>();

  /**
   * Keep `conn` until its socket closes; `closed` runs after it was taken out, with the close code
   * the client sent (1006 when it sent no close frame).
   */
  add(id: number, entry: OpenConn<C>, closed: (code: number) => void): void {
    this.open.set(id, entry);
    entry.socket.on('close', (code: number) => {
      entry.conn.closedNow();
      entry.timers.clearAll();
      this.open.delete(id);
      closed(code);
    });
  }

  get(id: number): OpenConn<C> | undefined {
    return this.open.get(id);
  }

  has(id: number): boolean {
    return this.open.has(id);
  }

  get size(): number {
    return this.open.size;
  }

  values(): IterableIterator<OpenConn<C>> {
    return this.open.values();
  }

  /** Timers still set by open connections (0 after `closeAll()`). */
  get pendingTimers(): number {
    let n = 0;
    for (const o of this.open.values()) n += o.timers.size;
    return n;
  }

  /** Cut every socket now and clean up at once, without waiting for their 'close'. */
  closeAll(): void {
    for (const { conn, socket, timers } of this.open.values()) {
      socket.terminate();
      conn.closedNow();
      timers.clearAll();
    }
    this.open.clear();
  }
}
