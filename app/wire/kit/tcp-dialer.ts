/**
 * The TCP side of the ReconnectingLink (the Advent dialect): one `net` socket per dial, bytes in
 * as they come (the dialect decodes its frames), Nagle off (frames are small and interactive).
 */
import net from 'node:net';
import type { Dialer, LinkSocket, SocketEvents } from './link.js';

export interface TcpTarget {
  host: string;
  port: number;
}

export class TcpDialer implements Dialer<Buffer> {
  constructor(private readonly target: () => TcpTarget) {}

  dial(events: SocketEvents<Buffer>): Promise<LinkSocket> {
    const { host, port } = this.target();
    const socket = net.connect({ host, port });
    socket.setNoDelay(true);
    let lastError = '';
    socket.on('connect', () => events.open());
    socket.on('data', (chunk: Buffer) => events.data(chunk));
    socket.on('drain', () => events.drain());
    socket.on('error', (err: NodeJS.ErrnoException) => {
      lastError = describeSocketError(err, host, port);
    });
    socket.on('close', () => events.closed(lastError || 'the connection was closed by the server'));
    return Promise.resolve({
      send: (data) => {
        socket.write(data);
      },
      get bufferedBytes() {
        return socket.writableLength;
      },
      pause: () => socket.pause(),
      resume: () => socket.resume(),
      close: () => {
        socket.end();
      },
      destroy: () => {
        if (!socket.destroyed) socket.destroy();
      },
    });
  }
}

function describeSocketError(err: NodeJS.ErrnoException, host: string, port: number): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return `nothing is listening at ${host}:${port} (connection refused)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the server name '${host}' could not be resolved`;
    case 'ECONNRESET':
      return 'the server reset the connection';
    case 'ETIMEDOUT':
      return `the connection to ${host}:${port} timed out`;
    default:
      return err.message;
  }
}
