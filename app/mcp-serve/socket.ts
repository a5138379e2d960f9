/**
 * The running agent's door for `advent-agent mcp` (issue 12): every CoreApi listens on its data
 * folder's socket (socket-path.ts) and serves each connection as one MCP session, newline-delimited
 * JSON-RPC as on stdio. So a stdio client launched while the app (or `ui`, `run`) holds the data
 * folder is relayed into it: its prompts appear in the open window and its calls join the one
 * audit chain. A socket file left by an agent that died is removed; one that answers is not ours
 * to take.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, rename, unlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { PassThrough, type Readable, type Transform, type Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import {
  MAX_MESSAGE_BYTES,
  MAX_UNREAD_ANSWER_BYTES,
  UNREAD_ANSWERS_PAUSE_BYTES,
} from './limits.js';
import { type RefusedLine, lineSplitter } from './lines.js';
import { type Refused, answerMalformedLines, refusalNotice } from './malformed.js';
import { socketPath, socketProblem, tokenPath } from './socket-path.js';

/** Sessions one agent serves over its socket at once (each is an app the user launched). */
export const MAX_SOCKET_SESSIONS = 64;
/** How long a new connection has to send its token line. */
export const TOKEN_WAIT_MS = 5_000;
const TOKEN_LINE_MAX = 256;

export interface SocketSession {
  /** Serve one MCP session over this transport; the returned function ends it. */
  (transport: StdioServerTransport): () => void;
}

export interface SocketListener {
  readonly path: string;
  close(): Promise<void>;
}

/** Nobody answers on `file`: a socket an agent left behind when it died. */
function isStale(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(file);
    probe.once('connect', () => {
      probe.destroy();
      resolve(false);
    });
    probe.once('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code === 'ECONNREFUSED' || err.code === 'ENOENT'),
    );
  });
}

function listenOn(server: net.Server, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(file, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/**
 * The token line a client must send first, checked in constant time. On success `accepted` gets,
 * in the same turn (so no byte is lost in between), the session's input: what came after the
 * token, then the rest of the socket.
 */
function awaitToken(socket: net.Socket, token: Buffer, accepted: (input: Readable) => void): void {
  let got = Buffer.alloc(0);
  const stop = (): void => {
    clearTimeout(timer);
    socket.off('data', onData);
  };
  const onData = (chunk: Buffer): void => {
    got = Buffer.concat([got, chunk]);
    const nl = got.indexOf(0x0a);
    if (nl < 0) {
      if (got.length > TOKEN_LINE_MAX) {
        stop();
        socket.destroy();
      }
      return;
    }
    stop();
    const sent = got.subarray(0, nl);
    if (sent.length !== token.length || !timingSafeEqual(sent, token)) {
      socket.destroy();
      return;
    }
    const input = new PassThrough();
    input.write(got.subarray(nl + 1));
    socket.pipe(input);
    accepted(input);
  };
  const timer = setTimeout(() => {
    stop();
    socket.destroy();
  }, TOKEN_WAIT_MS);
  socket.on('data', onData);
}

/** What a client is told of a message past the bound, and the log says. */
export const TOO_LONG = `a message may be at most ${MAX_MESSAGE_BYTES} bytes; a longer one is not read`;

/**
 * The lines of a stream client for its transport, one whole line at a time (lines.ts). A line
 * past MAX_MESSAGE_BYTES is not read: the client is answered with an Invalid Request error under
 * the request's id when the line's edges tell it for sure (refusedRequestId), without one
 * otherwise; `refused` is told, and the session goes on with the next line. So a model writing a
 * file too large for one message learns why at once, instead of its client waiting until it
 * times out. (A whole line the transport cannot read is answered as well: malformed.ts.)
 */
export function wholeLines(transport: () => StdioServerTransport, refused: Refused): Transform {
  return lineSplitter({
    maxBytes: MAX_MESSAGE_BYTES,
    overflow: (line) => {
      const id = refusedRequestId(line);
      // With no id the answer has none: MCP's schema has no null id (JSON-RPC's "null" for it).
      const answer: JSONRPCMessage = {
        jsonrpc: '2.0',
        ...(id !== undefined && { id }),
        error: { code: ErrorCode.InvalidRequest, message: TOO_LONG },
      };
      void transport()
        .send(answer)
        .catch(() => undefined);
      refused(id, TOO_LONG);
    },
  });
}

/** One `"key": value` with a value that is a plain string, number, or literal. */
const PLAIN_PAIR =
  /\s*"([^"\\]{1,32})"\s*:\s*("[^"\\]{0,128}"|-?\d{1,15}|true|false|null)\s*([,}])/y;
/** The object's last key is `id`: `,"id": value}` at the very end of the line. */
const LAST_ID = /[{,]\s*"id"\s*:\s*("[^"\\]{0,128}"|-?\d{1,15})\s*}\s*$/;

/**
 * The id of a refused line, when it is surely a request's: its first keys (plain values only, up
 * to the first that is not) hold `method`, and `id` is one of them or the object's last key (the
 * SDK's clients write `method`, `params`, `jsonrpc`, `id`). Only a key the outer object's braces
 * enclose is read so; a response's id (the client answering our question) is not taken, as the
 * client would read our error as the answer to its own request of that number.
 */
export function refusedRequestId(line: RefusedLine): RequestId | undefined {
  const head = line.head.toString('utf8');
  const open = /^\s*\{/.exec(head);
  if (!open) return undefined;
  const first = new Map<string, string>();
  PLAIN_PAIR.lastIndex = open[0].length;
  for (let m; (m = PLAIN_PAIR.exec(head));) {
    first.set(m[1]!, m[2]!);
    if (m[3] === '}') break;
  }
  if (!first.get('method')?.startsWith('"')) return undefined;
  const raw = first.get('id') ?? LAST_ID.exec(line.tail.toString('utf8'))?.[1];
  if (raw === undefined) return undefined;
  const id: unknown = JSON.parse(raw);
  return typeof id === 'string' || Number.isSafeInteger(id) ? (id as RequestId) : undefined;
}

export interface UnreadAnswers {
  /** Reading stopped for the first time on this stream: its client is slow to read. */
  slow?: (queued: number) => void;
  /** Past MAX_UNREAD_ANSWER_BYTES: the caller ends the session (the queue goes with it). */
  overflow: (queued: number) => void;
}

/**
 * Backpressure for one session over a pair of streams (DESIGN §1.7). The SDK's transport makes
 * each send wait for 'drain', yet goes on reading requests, so a client that writes requests and
 * never reads the answers would have the agent hold every answer in memory. So once more than
 * UNREAD_ANSWERS_PAUSE_BYTES wait in `output`, `input` is paused (its pipe then stops reading the
 * socket) until `output` drains. Answers already under way still come; when they pile up past
 * MAX_UNREAD_ANSWER_BYTES behind a stream that was already paused, `overflow` is told. (One answer
 * larger than that on its own, on a stream that was keeping up, still goes.)
 */
export function holdReadsWhileUnread(
  transport: StdioServerTransport,
  input: Readable,
  output: Writable,
  on: UnreadAnswers,
): void {
  const send = transport.send.bind(transport);
  let paused = false;
  let toldSlow = false;
  let overflowed = false;
  transport.send = (message) => {
    const before = output.writableLength;
    const sent = send(message);
    const queued = output.writableLength;
    if (overflowed) return sent;
    if (before > UNREAD_ANSWERS_PAUSE_BYTES && queued > MAX_UNREAD_ANSWER_BYTES) {
      overflowed = true;
      on.overflow(queued);
    } else if (queued > UNREAD_ANSWERS_PAUSE_BYTES && !paused) {
      paused = true;
      input.pause();
      if (!toldSlow) on.slow?.(queued);
      toldSlow = true;
      output.once('drain', () => {
        paused = false;
        input.resume();
      });
    }
    return sent;
  };
}

/**
 * Listen on the data folder's socket. Rejects with a message for the user when it cannot (the
 * path is too long, another live agent answers there); the agent runs on without it.
 */
export async function listenForClients(
  dataDir: string,
  serve: SocketSession,
  log: (message: string) => void = () => undefined,
): Promise<SocketListener> {
  const problem = socketProblem(dataDir);
  if (problem) throw new Error(problem);
  const file = socketPath(dataDir);
  const token = randomBytes(32).toString('hex');
  // Written before anyone can connect, atomically, readable by the user alone.
  const tokenFile = tokenPath(dataDir);
  const temp = `${tokenFile}.${process.pid}.tmp`;
  await writeFile(temp, `${token}\n`, { mode: 0o600 });
  await rename(temp, tokenFile);
  const tokenBytes = Buffer.from(token);

  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    if (sockets.size >= MAX_SOCKET_SESSIONS) {
      log(`an MCP client was turned away: ${MAX_SOCKET_SESSIONS} are connected already`);
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
    awaitToken(socket, tokenBytes, (input) => {
      // Whole lines, as on stdio (see wholeLines); a line past the bound, or one that is not a
      // JSON-RPC message, is answered and skipped.
      const refused: Refused = (id, reason) => log(refusalNotice(id, reason));
      const lines = wholeLines(() => transport, refused);
      input.pipe(lines);
      const transport = new StdioServerTransport(lines, socket, {
        maxBufferSize: MAX_MESSAGE_BYTES,
      });
      holdReadsWhileUnread(transport, lines, socket, {
        slow: () =>
          log(
            `an MCP client is slow to read its answers (over ${UNREAD_ANSWERS_PAUSE_BYTES} bytes wait): its next requests are read once it catches up`,
          ),
        overflow: (queued) => {
          log(
            `an MCP client was cut off: ${queued} bytes of answers waited for it to read them (${MAX_UNREAD_ANSWER_BYTES} at most)`,
          );
          socket.destroy();
        },
      });
      const end = serve(transport);
      // Only now: serve connected the transport, which set the onerror this wraps and started
      // its reading (both before connect's first await).
      answerMalformedLines(transport, lines, refused);
      // The client went: the session ends (its waiting prompts are withdrawn, calls told to stop).
      socket.once('close', end);
      // The session closed its transport (the agent is closing): the socket goes with it.
      const closed = transport.onclose;
      transport.onclose = () => {
        closed?.();
        socket.destroy();
      };
    });
  });

  try {
    await listenOn(server, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || process.platform === 'win32')
      throw err;
    if (!(await isStale(file)))
      throw new Error(`another agent already answers on ${file}`, { cause: err });
    log(`removed a stale MCP socket left by an agent that stopped (${file})`);
    await unlink(file).catch(() => undefined);
    await listenOn(server, file);
  }
  if (process.platform !== 'win32') await chmod(file, 0o600).catch(() => undefined);

  return {
    path: file,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      // The server removed its socket file; the token goes with it (a relay then runs its own agent).
      await unlink(tokenFile).catch(() => undefined);
    },
  };
}
