/**
 * The agent as an MCP server for other apps (issue 12), as one running agent holds it: a session
 * per client on whichever transport it came — stdio (`advent-agent mcp` in-process), the data
 * folder's socket (`advent-agent mcp` relaying into a running app), Streamable HTTP on
 * 127.0.0.1 — every one through the agent's gate, prompts and audit log.
 */
import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Agent } from '../agent.js';
import type { McpHttpSettings, McpHttpState } from '../contract/mcp-serve.js';
import { DEFAULT_MCP_HTTP_PORT } from '../contract/mcp-serve.js';
import type { NoticeWords } from '../contract/notice.js';
import { Emitter } from '../events.js';
import type { SecretStore } from '../settings/secrets.js';
import { type McpHttpServer, type McpHttpTimeouts, startMcpHttp } from './http.js';
import { MAX_MESSAGE_BYTES } from './limits.js';
import { type Refused, answerMalformedLines, refusalNotice } from './malformed.js';
import { type McpSession, type Offered, createMcpSession } from './session.js';
import {
  type SocketListener,
  holdReadsWhileUnread,
  listenForClients,
  wholeLines,
} from './socket.js';

/** Where the HTTP endpoint's bearer token is kept. */
export const HTTP_TOKEN_SECRET = 'mcp:http-token';

export interface McpServeOptions {
  agent: Agent;
  secrets: SecretStore;
  dataDir: string;
  version: string;
  /** Which services a connection is offered (default: every enabled one). */
  offered?: Offered;
  /** Tools per `tools/list` page (tests make it small). */
  pageSize?: number;
  /** How long the HTTP endpoint waits for a request to arrive (tests make it short). */
  httpTimeouts?: Partial<McpHttpTimeouts>;
  /**
   * A line for the log; a warning the user must know also comes in words a window translates
   * (`message` stays the English sentence a terminal prints).
   */
  log: (level: 'info' | 'warn', message: string, words?: NoticeWords) => void;
}

export type McpServeEvents = { http: McpHttpState };

export class McpServe {
  readonly events = new Emitter<McpServeEvents>();
  private readonly sessions = new Set<McpSession>();
  private socket: SocketListener | undefined;
  private http: McpHttpServer | undefined;
  private httpState: McpHttpState = { status: 'off' };
  private token: string | undefined;
  /** HTTP starts and stops one at a time, in the order asked. */
  private httpQueue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: McpServeOptions) {}

  /** A new session over `transport`; the returned function ends it. */
  serve(transport: Transport): () => void {
    const session = this.newSession();
    session.server.connect(transport).catch((err: unknown) => {
      const reason = (err as Error).message;
      this.options.log('warn', `an MCP client session could not start: ${reason}`, {
        key: 'notice.mcpSessionFailed',
        params: { reason },
      });
      session.dispose();
    });
    return () => session.dispose();
  }

  /**
   * Serve one client on stdio (`advent-agent mcp` running its own agent); resolves when the
   * session ends: the client closed stdin, or the session was ended here (each such end is told
   * as a warning where it happens). Stdin is then no longer read by it.
   */
  serveStdio(stdin: NodeJS.ReadableStream, stdout: NodeJS.WritableStream): Promise<void> {
    // The transport is handed whole lines (lines.ts): a long line in small pieces costs no more
    // than in one. A line past the bound, or one that is not a JSON-RPC message (malformed.ts), is
    // answered with an error and the session goes on; the line on stderr is for whoever reads the
    // MCP app's log of this server.
    const refused: Refused = (id, reason) => this.options.log('warn', refusalNotice(id, reason));
    const lines = wholeLines(() => transport, refused);
    (stdin as Readable).pipe(lines);
    const transport = new StdioServerTransport(lines, stdout as Writable, {
      maxBufferSize: MAX_MESSAGE_BYTES,
    });
    // A client that stops reading its answers is not read either (a pipe queues them in memory).
    holdReadsWhileUnread(transport, lines, stdout as Writable, {
      overflow: (queued) => {
        this.options.log(
          'warn',
          `an MCP client was cut off: ${queued} bytes of answers waited for it to read them`,
          { key: 'notice.mcpClientCutOff', params: { bytes: queued } },
        );
        void transport.close();
      },
    });
    return new Promise((resolve) => {
      const end = this.serve(transport);
      // Only now: serve connected the transport, which set the onerror this wraps and started
      // its reading (both before connect's first await).
      answerMalformedLines(transport, lines, refused);
      const finish = (): void => {
        // Nothing reads what the client sends now: a stdin still piped would be read (and
        // dropped) for good, keeping the process alive.
        (stdin as Readable).unpipe(lines);
        end();
        resolve();
      };
      stdin.once('end', finish);
      stdin.once('close', finish);
      // The session closed its transport (cut off above, or the agent is closing): it is over.
      const closed = transport.onclose;
      transport.onclose = () => {
        closed?.();
        finish();
      };
    });
  }

  /** Listen on the data folder's socket; a failure is told, and the agent runs on without it. */
  async listen(): Promise<void> {
    try {
      this.socket = await listenForClients(
        this.options.dataDir,
        (transport) => this.serve(transport),
        (m) => this.options.log('info', m),
      );
    } catch (err) {
      const reason = (err as Error).message;
      this.options.log(
        'warn',
        `'advent-agent mcp' cannot reach this agent: ${reason}. MCP apps started now run their own agent, which cannot open this data folder while the app holds it`,
        { key: 'notice.mcpUnreachable', params: { reason } },
      );
    }
  }

  // --- Streamable HTTP ---------------------------------------------------------------------------

  state(): McpHttpState {
    return this.httpState;
  }

  /** Start, move or stop the HTTP endpoint to match `settings`. */
  applyHttp(settings: McpHttpSettings): Promise<void> {
    const run = async (): Promise<void> => {
      const current = this.http;
      if (current && settings.enabled && current.port === settings.port) return;
      if (current) {
        this.http = undefined;
        await current.close();
      }
      if (!settings.enabled || this.closed) return this.setState({ status: 'off' });
      this.setState({ status: 'starting', port: settings.port });
      try {
        // Switching on makes no token: one is made when the user asks (shown once) or a host needs
        // it; until then every request is refused (401).
        await this.savedToken();
        this.http = await startMcpHttp({
          port: settings.port,
          token: () => this.token ?? '',
          newSession: () => this.newSession(),
          timeouts: this.options.httpTimeouts,
          log: (m) => this.options.log('info', m),
        });
        this.setState({
          status: 'listening',
          port: this.http.port,
          url: this.http.url,
          hasToken: this.token !== undefined,
        });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE')
          return this.setState({
            status: 'failed',
            port: settings.port,
            reason: 'other',
            message: (err as Error).message,
          });
        // Another program has the port (ours was closed above, and the data folder's lock keeps
        // any other agent on this token away): every app set up with the address now hands it
        // the token. So the token goes; the user makes a new one for the apps (shown once).
        const withdrawn = await this.withdrawHttpToken();
        this.setState({
          status: 'failed',
          port: settings.port,
          reason: 'port_in_use',
          message:
            `port ${settings.port} is in use by another program; choose another port` +
            (withdrawn
              ? '. The bearer token was withdrawn, as MCP apps set up with it may have sent it to that program: make a new one and give it to them'
              : ''),
        });
      }
    };
    this.httpQueue = this.httpQueue.then(run, run);
    return this.httpQueue;
  }

  /**
   * The bearer token, made if there is none and kept in the SecretStore. For hosts that must tell
   * it (the terminal prints it at start); the UI never reads it back (`resetHttpToken`).
   */
  async httpToken(): Promise<string> {
    return (await this.savedToken()) ?? this.resetHttpToken();
  }

  /** Whether a token was made (and kept): only then can any request be let in. */
  async hasHttpToken(): Promise<boolean> {
    return (await this.savedToken()) !== undefined;
  }

  /** A new token, for the caller to show once; sessions opened with the old one end. */
  async resetHttpToken(): Promise<string> {
    // From the system's CSPRNG, never the injectable id source (tests seed that one).
    const token = randomBytes(32).toString('base64url');
    await this.options.secrets.set(HTTP_TOKEN_SECRET, token);
    this.token = token;
    await this.http?.closeSessions();
    const state = this.httpState;
    if (state.status === 'listening' && !state.hasToken)
      this.setState({ ...state, hasToken: true });
    return token;
  }

  /** Forget the token, so no request is let in with it; whether there was one. */
  private async withdrawHttpToken(): Promise<boolean> {
    try {
      if ((await this.savedToken()) === undefined) return false;
      await this.options.secrets.delete(HTTP_TOKEN_SECRET);
      this.token = undefined;
      return true;
    } catch {
      // The store failed: the state then does not claim the token is gone.
      return false;
    }
  }

  private async savedToken(): Promise<string | undefined> {
    if (this.token) return this.token;
    const saved = await this.options.secrets.get(HTTP_TOKEN_SECRET);
    if (saved) this.token = saved;
    return this.token;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const session of [...this.sessions]) session.dispose();
    await this.socket?.close().catch(() => undefined);
    this.socket = undefined;
    await this.applyHttp({ enabled: false, port: DEFAULT_MCP_HTTP_PORT });
  }

  // -----------------------------------------------------------------------------------------------

  private newSession(): McpSession {
    const { agent, version, offered, pageSize } = this.options;
    const session = createMcpSession({
      gate: agent.gate,
      tools: () => agent.toolEntries(),
      // What the user offers MCP apps changes the list too (Services → Offered to each connection).
      onToolsChanged: (listener) => {
        const offRegistry = agent.registry.events.on('changed', listener);
        const offOffer = agent.events.on('offerChanged', listener);
        return {
          dispose: () => {
            offRegistry();
            offOffer();
          },
        };
      },
      serverInfo: { name: 'advent-agent', version },
      clock: agent.clockSource,
      language: () => agent.getSettings().language,
      offered: offered ?? ((connectionId, tool) => agent.isOffered(connectionId, tool.name)),
      pageSize,
      log: (m) => this.options.log('info', m),
      onDispose: () => this.sessions.delete(session),
    });
    this.sessions.add(session);
    return session;
  }

  private setState(state: McpHttpState): void {
    this.httpState = state;
    this.events.emit('http', state);
  }
}
