/**
 * `advent-agent mcp` when an agent already holds the data folder (issue 12): connect to its
 * socket, send the token, then relay bytes both ways, so the stdio client talks to the running
 * agent as if it were the server itself. Nothing but the client's own MCP traffic reaches stdout.
 */
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import { socketPath, socketProblem, tokenPath } from './socket-path.js';

/**
 * A connection to the agent holding `dataDir`, the token already sent; undefined when no agent
 * answers there (then the caller runs one itself).
 */
export async function connectToAgent(dataDir: string): Promise<net.Socket | undefined> {
  if (socketProblem(dataDir)) return undefined;
  let token: string;
  try {
    token = (await readFile(tokenPath(dataDir), 'utf8')).trim();
  } catch {
    return undefined;
  }
  const socket = await new Promise<net.Socket | undefined>((resolve) => {
    const s = net.connect(socketPath(dataDir));
    s.once('connect', () => resolve(s));
    s.once('error', () => resolve(undefined));
  });
  if (!socket) return undefined;
  socket.write(`${token}\n`);
  return socket;
}

/**
 * Relay until either side ends: the client closing stdin ends the session; the agent going away
 * (the app quit) ends the relay, and the client sees its server exit as with any stdio server.
 */
export function relay(
  socket: net.Socket,
  stdin: NodeJS.ReadableStream,
  stdout: NodeJS.WritableStream,
): Promise<void> {
  return new Promise((resolve) => {
    socket.on('error', () => undefined);
    stdin.pipe(socket);
    socket.pipe(stdout, { end: false });
    stdin.once('end', () => socket.end());
    socket.once('close', () => {
      stdin.unpipe(socket);
      resolve();
    });
  });
}
