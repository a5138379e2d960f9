/**
 * `advent-agent mcp` when an agent already holds the data folder (issue 12): connect to its
 * socket, send the token, then relay bytes both ways, so the stdio client talks to the running
 * agent as if it were the server itself. Nothing but the client's own MCP traffic reaches stdout.
 */
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import { lockHolder } from '../settings/lock.js';
import { socketPath, socketProblem, tokenPath } from './socket-path.js';

/**
 * How long `mcp` waits for the socket of an agent that holds the data folder but does not answer
 * yet: it is starting (two MCP apps launched together, both found no agent and raced for the lock).
 */
export const STARTING_AGENT_WAIT_MS = 5_000;
const FIRST_RETRY_MS = 25;
const MAX_RETRY_MS = 400;

const readToken = (dataDir: string): Promise<string | undefined> =>
  readFile(tokenPath(dataDir), 'utf8').then(
    (t) => t.trim(),
    () => undefined,
  );

/**
 * A connection to the agent holding `dataDir`, the token already sent; undefined when no agent
 * answers there (then the caller runs one itself).
 */
export async function connectToAgent(dataDir: string): Promise<net.Socket | undefined> {
  if (socketProblem(dataDir)) return undefined;
  const token = await readToken(dataDir);
  if (token === undefined) return undefined;
  const socket = await new Promise<net.Socket | undefined>((resolve) => {
    const s = net.connect(socketPath(dataDir));
    s.once('connect', () => resolve(s));
    s.once('error', () => resolve(undefined));
  });
  if (!socket) return undefined;
  // An agent writes its token before it listens: the token read before an agent that was just
  // starting came up may be its predecessor's, which it would refuse by closing the connection.
  if ((await readToken(dataDir)) !== token) {
    socket.destroy();
    return undefined;
  }
  socket.write(`${token}\n`);
  return socket;
}

/**
 * The agent holding `dataDir` once its socket answers, tried again with a growing pause for at
 * most `waitMs` while a live process holds the lock; undefined if it never answers (or the holder
 * went away).
 */
export async function awaitStartingAgent(
  dataDir: string,
  waitMs = STARTING_AGENT_WAIT_MS,
): Promise<net.Socket | undefined> {
  if (socketProblem(dataDir)) return undefined;
  const deadline = Date.now() + waitMs;
  for (let pause = FIRST_RETRY_MS; (await lockHolder(dataDir)) !== undefined; pause *= 2) {
    const socket = await connectToAgent(dataDir);
    if (socket) return socket;
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, MAX_RETRY_MS, left)));
  }
  return undefined;
}

/**
 * How `mcp` starts, in the terminal and in the desktop app alike: relay to the agent that holds
 * the data folder, or else `open` an agent of its own. When `open` fails while a live agent holds
 * the folder (it took the lock first and is still starting), that agent's socket is waited for;
 * if it never answers, `open`'s own error stands.
 */
export async function relayOrOpen<T>(
  dataDir: string,
  open: () => Promise<T>,
  waitMs = STARTING_AGENT_WAIT_MS,
): Promise<{ socket: net.Socket } | { own: T }> {
  const socket = await connectToAgent(dataDir);
  if (socket) return { socket };
  try {
    return { own: await open() };
  } catch (err) {
    const late = await awaitStartingAgent(dataDir, waitMs);
    if (late) return { socket: late };
    throw err;
  }
}

/** Who ended a relayed session: the client closing stdin, or the agent closing the connection. */
export type RelayEnd = 'client' | 'agent';

/**
 * Relay until either side ends: the client closing stdin ends the session; the agent going away
 * (the app quit, or it cut this client off) ends the relay, and the client sees its server exit
 * as with any stdio server. Resolves with who ended it, for the caller to say why.
 */
export function relay(
  socket: net.Socket,
  stdin: NodeJS.ReadableStream,
  stdout: NodeJS.WritableStream,
): Promise<RelayEnd> {
  return new Promise((resolve) => {
    let clientEnded = false;
    socket.on('error', () => undefined);
    stdin.pipe(socket);
    socket.pipe(stdout, { end: false });
    stdin.once('end', () => {
      clientEnded = true;
      socket.end();
    });
    socket.once('close', () => {
      stdin.unpipe(socket);
      resolve(clientEnded ? 'client' : 'agent');
    });
  });
}
