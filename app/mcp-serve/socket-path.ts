/**
 * Where a running agent listens for `advent-agent mcp` (issue 12): a Unix socket in the data
 * folder (the folder is 0700 and the socket 0600), or on Windows a named pipe whose name derives
 * from the data folder. Either way the client first sends the token kept in the data folder
 * (`mcp.token`, 0600), so only someone who can read that folder gets in.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';

export const SOCKET_FILE = 'mcp.sock';
export const TOKEN_FILE = 'mcp.token';
/** sockaddr_un holds 104 bytes on macOS (108 on Linux), its terminating NUL included. */
export const MAX_SOCKET_PATH_BYTES = 103;

export function socketPath(dataDir: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') {
    const id = createHash('sha256')
      .update(path.win32.resolve(dataDir).toLowerCase())
      .digest('hex')
      .slice(0, 32);
    return `\\\\.\\pipe\\advent-agent-mcp-${id}`;
  }
  return path.join(path.resolve(dataDir), SOCKET_FILE);
}

export function tokenPath(dataDir: string): string {
  return path.join(path.resolve(dataDir), TOKEN_FILE);
}

/** Why this data folder's socket cannot exist, if it cannot (a path too long for the OS). */
export function socketProblem(
  dataDir: string,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  if (platform === 'win32') return undefined;
  const p = socketPath(dataDir, platform);
  const bytes = Buffer.byteLength(p);
  return bytes > MAX_SOCKET_PATH_BYTES
    ? `the data folder's path is too long for a local socket (${bytes} bytes; at most ${MAX_SOCKET_PATH_BYTES})`
    : undefined;
}
