/**
 * The listening socket of every simulator (Advent, XiaoZhi, endpoint, robot): how it starts, where
 * it is, how it stops. One place so all four fail the same way on a port in use and never let a
 * later server error crash a test run.
 */
import type { AddressInfo, Server } from 'node:net';

export interface ListenAt {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Loopback unless a caller asks otherwise: the simulators trust anyone. */
  host?: string;
}

/**
 * Listen at `at`. Failing to listen (a port in use) rejects, for the CLI to say so; errors after
 * that (e.g. out of file descriptors) go to `onError`: told, never fatal.
 */
export function listen(server: Server, at: ListenAt, onError: (err: Error) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: at.port ?? 0, host: at.host ?? '127.0.0.1' }, () => {
      server.off('error', reject);
      server.on('error', onError);
      resolve();
    });
  });
}

/** The port `server` listens on (0 once closed). */
export function boundPort(server: Server): number {
  return (server.address() as AddressInfo | null)?.port ?? 0;
}

/** `host:port` as a URL writes it: an IPv6 host in brackets. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Stop listening; resolves once the server closed (at once if it was not listening). */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
  });
}
