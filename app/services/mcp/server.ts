/**
 * One imported MCP server: its connection (stdio process, Streamable HTTP, or SSE for older
 * servers), its state for the row (starting / ready N tools / failed: reason / restarting in N s),
 * its tools, its log, and its calls. A process that dies after it was ready is restarted with
 * backoff; one that cannot start at all is `failed` with the reason (command not found, exited at
 * once, speaks no MCP, no answer to initialize, no tools list) and stays so until the user acts.
 * Everything it does stays inside this object: a broken server affects nothing else.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ResultSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Clock, TimerHandle } from '../../clock.js';
import type { McpServerConfig, McpServerState } from '../../contract/mcp.js';
import { Emitter } from '../../events.js';
import type { IdSource } from '../../ids.js';
import { oneLine } from '../../unsafe-chars.js';
import {
  DEFAULT_EVENT_STREAM_PACING,
  DEFAULT_POST_LIMITS,
  type EventStreamPacing,
  boundedFetch,
} from './bounded-fetch.js';
import type { McpExit, McpLauncher } from './launcher.js';
import { MCP_LIMITS, cutChars } from './limits.js';
import { mergePath } from './login-path.js';
import { ProcessTransport } from './process-transport.js';
import { ServerLog } from './server-log.js';
import { type ListedTool, type ToolProblem, readTools } from './tools.js';

export interface McpTiming {
  /** How long `initialize` may take (a server downloaded by npx on first use can be slow). */
  initializeTimeoutMs: number;
  listTimeoutMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** Ready this long and the restart backoff starts over. */
  healthyResetMs: number;
  /** Consecutive restarts that fail before the server is marked failed. */
  maxRestarts: number;
  /**
   * Re-list this long after a `list_changed` that follows a quiet spell (a flood is one re-list).
   */
  relistDelayMs: number;
  /**
   * While changes keep coming, re-lists are at least this far apart, the spacing doubling with
   * each one up to `relistIntervalMaxMs`: every re-list re-registers the server's tools with every
   * voice server, so a server announcing changes non-stop must not keep the agent busy doing so.
   */
  relistIntervalMs: number;
  relistIntervalMaxMs: number;
  /** How often a server's event stream is reopened when it keeps ending, and when to give up. */
  eventStream: EventStreamPacing;
}

export const DEFAULT_MCP_TIMING: McpTiming = {
  initializeTimeoutMs: 60_000,
  listTimeoutMs: 30_000,
  backoffInitialMs: 1000,
  backoffMaxMs: 60_000,
  healthyResetMs: 60_000,
  maxRestarts: 8,
  relistDelayMs: 100,
  relistIntervalMs: 2000,
  relistIntervalMaxMs: 30_000,
  eventStream: DEFAULT_EVENT_STREAM_PACING,
};

export const DEFAULT_CALL_TIMEOUT_SEC = 60;

/** Secret values of a server, read from the SecretStore when it starts. */
export interface ServerSecrets {
  env: Record<string, string>;
  headers: Record<string, string>;
}

export interface ServerDeps {
  clock: Clock;
  ids: IdSource;
  launcher: McpLauncher;
  /** The PATH to start commands with (the login shell's, in desktop apps). */
  searchPath: () => Promise<string | undefined>;
  secrets: (config: McpServerConfig) => Promise<ServerSecrets>;
  version: string;
  timing: McpTiming;
  platform?: NodeJS.Platform;
  /** The fetch for HTTP servers (tests may count requests). */
  fetch?: typeof fetch;
}

export type ServerEvents = {
  state: McpServerState;
  /** The tools changed (listed, re-listed, or gone with the server). */
  tools: readonly ListedTool[];
};

/** A failure worded for the server's row. */
class StartFailure extends Error {}

export class McpServerConnection {
  readonly events = new Emitter<ServerEvents>();
  readonly log: ServerLog;
  private _state: McpServerState = { status: 'stopped' };
  private _tools: readonly ListedTool[] = [];
  private _problems: ToolProblem[] = [];
  /** The notes of the last listing, logged (readTools): a re-list logs only new ones. */
  private noted = new Set<string>();
  private _serverInfo: { name: string; version: string; protocolVersion?: string } | undefined;
  private client: Client | undefined;
  /** Bumped on every start and stop: late events of an older connection are ignored. */
  private generation = 0;
  private restarts = 0;
  private readyAt = 0;
  private restartTimer: TimerHandle | undefined;
  private relistTimer: TimerHandle | undefined;
  /** When `list_changed` last came and the tools were last re-listed, for the spacing. */
  private lastNoticeAt = -Infinity;
  private lastRelistAt = -Infinity;
  /** The spacing the next re-list keeps from the last one: 0 after a quiet spell. */
  private relistGap = 0;
  private relisting: Promise<void> | undefined;
  private relistAgain = false;
  private garbage: string[] = [];
  private lastExit: McpExit | undefined;
  /**
   * Why this connection was closed by us: the server sent a message over the bound, stopped
   * reading what we send it, left too many of our posts unanswered, or (HTTP+SSE) its event stream
   * kept ending at once.
   */
  private tooLarge: string | undefined;
  /** Calls in flight, aborted on stop so the server is told (notifications/cancelled). */
  private readonly calls = new Set<AbortController>();

  constructor(
    private _config: McpServerConfig,
    private readonly deps: ServerDeps,
  ) {
    this.log = new ServerLog(() => deps.clock.now());
  }

  get config(): McpServerConfig {
    return this._config;
  }

  get state(): McpServerState {
    return this._state;
  }

  get tools(): readonly ListedTool[] {
    return this._tools;
  }

  get problems(): readonly ToolProblem[] {
    return this._problems;
  }

  get serverInfo(): { name: string; version: string; protocolVersion?: string } | undefined {
    return this._serverInfo;
  }

  get timeoutMs(): number {
    return (this._config.timeoutSec ?? DEFAULT_CALL_TIMEOUT_SEC) * 1000;
  }

  /** The configuration changed (trust, policy, timeout: no reconnect needed for those). */
  updateConfig(config: McpServerConfig): void {
    this._config = config;
  }

  /** Connect (again) in the background; the state events tell how it goes. */
  start(): void {
    this.clearTimers();
    this.restarts = 0;
    void this.connect(false);
  }

  /** Stop and start again (the user asked, or the configuration changed). */
  async restart(): Promise<void> {
    await this.stop();
    this.start();
  }

  /** Cancel its calls, close the connection, end its process tree. */
  async stop(): Promise<void> {
    this.generation += 1;
    this.clearTimers();
    for (const c of this.calls)
      c.abort(new Error(`the MCP server '${this._config.name}' was stopped`));
    this.calls.clear();
    const client = this.client;
    this.client = undefined;
    this.setTools([]);
    if (this._state.status !== 'stopped') this.setState({ status: 'stopped' });
    await client?.close().catch(() => undefined);
  }

  /**
   * Call a tool. The gate's signal is passed on: when it aborts (the call's time is up, the app
   * stops) the SDK sends `notifications/cancelled` to the server.
   */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    const client = this.client;
    const state = this._state;
    if (!client || state.status !== 'ready') throw new Error(this.unavailable(state));
    const controller = new AbortController();
    const abort = () => controller.abort(signal.reason);
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
    this.calls.add(controller);
    try {
      return await client.request(
        { method: 'tools/call', params: { name: tool, arguments: args } },
        ResultSchema,
        // The gate owns the time limit; this one only backs it up.
        { signal: controller.signal, timeout: this.timeoutMs + 5000 },
      );
    } catch (err) {
      // Closing the connection over a message too large fails the call as "Connection closed".
      if (this.tooLarge && this.client !== client)
        throw new Error(`the MCP server '${this._config.name}' was disconnected: ${this.tooLarge}`);
      throw err;
    } finally {
      signal.removeEventListener('abort', abort);
      this.calls.delete(controller);
    }
  }

  private unavailable(state: McpServerState): string {
    const name = this._config.name;
    switch (state.status) {
      case 'restarting': {
        const s = Math.max(0, Math.ceil((state.at - this.deps.clock.now()) / 1000));
        return `the MCP server '${name}' stopped (${state.reason}) and is restarting in ${s} s; try again shortly`;
      }
      case 'starting':
        return `the MCP server '${name}' is still starting; try again in a moment`;
      case 'failed':
        return `the MCP server '${name}' is not working (${state.reason}); tell the user to check it in the app`;
      default:
        return `the MCP server '${name}' is switched off`;
    }
  }

  // --- connecting ------------------------------------------------------------------------------

  private async connect(isRestart: boolean): Promise<void> {
    const generation = ++this.generation;
    const current = () => generation === this.generation;
    const old = this.client;
    this.client = undefined;
    await old?.close().catch(() => undefined);
    if (!current()) return;
    this.garbage = [];
    this.lastExit = undefined;
    this.tooLarge = undefined;
    this.noted = new Set(); // a new start lists, and notes, afresh
    this.setState({ status: 'starting' });
    this.log.add('agent', isRestart ? 'restarting' : 'starting');
    let client: Client;
    try {
      client = await this.open(generation);
      if (!current()) {
        await client.close().catch(() => undefined);
        return;
      }
      this.client = client;
      await this.list(client, generation);
    } catch (err) {
      if (!current()) return;
      const reason = this.log.redact(this.describeFailure(err));
      this.log.add('agent', `failed: ${reason}`);
      const old2 = this.client;
      this.client = undefined;
      await old2?.close().catch(() => undefined);
      if (isRestart) this.scheduleRestart(reason);
      else {
        this.setTools([]);
        this.setState({ status: 'failed', reason });
      }
      return;
    }
    if (!current()) return;
    this.readyAt = this.deps.clock.now();
    const info = client.getServerVersion();
    this.log.add(
      'agent',
      `ready: ${this._tools.length} tool${this._tools.length === 1 ? '' : 's'}${info ? ` (${info.name} ${info.version})` : ''}`,
    );
    this.setState({ status: 'ready', tools: this._tools.length });
  }

  private async open(generation: number): Promise<Client> {
    const config = this._config;
    const secrets = await this.deps.secrets(config);
    this.log.setSecrets([...Object.values(secrets.env), ...Object.values(secrets.headers)]);
    const timeout = this.deps.timing.initializeTimeoutMs;
    if (config.transport === 'stdio') {
      const transport = await this.stdioTransport(config, secrets, generation);
      return this.initialize(transport, timeout, generation);
    }
    const url = new URL(config.url ?? '');
    const headers = { ...config.headers, ...secrets.headers };
    let transport: Transport | undefined;
    const { initializeTimeoutMs, listTimeoutMs } = this.deps.timing;
    const fetch = boundedFetch(
      this.deps.fetch ?? globalThis.fetch,
      MCP_LIMITS.messageBytes,
      (err) => {
        if (generation !== this.generation) return;
        this.tooLarge ??= err.message;
        this.log.add('agent', err.message);
        // The SDK would only log a failed stream and wait on; the connection fails at once instead.
        void transport?.close();
      },
      {
        ...DEFAULT_POST_LIMITS,
        // A post answered only when its call is done (a JSON answer) may take the call's time.
        timeoutMs: () => Math.max(this.timeoutMs + 5000, initializeTimeoutMs, listTimeoutMs),
        clock: this.deps.clock,
      },
      {
        pacing: this.deps.timing.eventStream,
        gaveUp: (err) => {
          if (generation !== this.generation) return;
          if (transport instanceof SSEClientTransport) {
            // The older transport answers on that stream only: without it the connection is dead.
            this.tooLarge ??= err.message;
            this.log.add('agent', `${err.message}; the connection is closed`);
            void transport.close();
            return;
          }
          // Streamable HTTP answers each call on its own post: the tools keep working. A server
          // announces a changed tool list on this stream only, and the agent does not re-list by
          // itself, so such a change is seen when the server is next restarted.
          this.log.add(
            'agent',
            `${err.message}; the agent stopped reopening it, so a change to its tools is seen only after a restart`,
          );
        },
      },
    );
    const init = { requestInit: { headers }, fetch };
    if (config.transport === 'sse')
      return this.initialize((transport = new SSEClientTransport(url, init)), timeout, generation);
    try {
      return await this.initialize(
        (transport = new StreamableHTTPClientTransport(url, init)),
        timeout,
        generation,
      );
    } catch (err) {
      if (config.fixedTransport || this.tooLarge || generation !== this.generation) throw err;
      // Servers from before Streamable HTTP (protocol 2024-11-05) speak HTTP+SSE at the same address.
      this.log.add('agent', `Streamable HTTP did not work (${errorText(err)}); trying SSE`);
      return this.initialize((transport = new SSEClientTransport(url, init)), timeout, generation);
    }
  }

  private async stdioTransport(
    config: McpServerConfig,
    secrets: ServerSecrets,
    generation: number,
  ): Promise<Transport> {
    const base = getDefaultEnvironment();
    const searchPath = await this.deps.searchPath();
    const sep = (this.deps.platform ?? process.platform) === 'win32' ? ';' : ':';
    const pathKey = Object.keys(base).find((k) => k.toUpperCase() === 'PATH') ?? 'PATH';
    if (searchPath) base[pathKey] = mergePath(searchPath, base[pathKey], sep);
    const env = { ...base, ...config.env, ...secrets.env };
    return new ProcessTransport(
      () =>
        this.deps.launcher.launch({
          command: config.command ?? '',
          args: config.args ?? [],
          env,
          cwd: config.cwd,
          serverName: config.name,
        }),
      {
        stderr: (line) => this.log.add('stderr', line),
        garbage: (line) => {
          if (this.garbage.length < 5) this.garbage.push(line.slice(0, 200));
          this.log.add('stdout', line);
        },
        notReading: (reason) => {
          if (generation !== this.generation) return;
          this.tooLarge ??= reason;
          this.log.add('agent', reason);
        },
        exit: (exit, requested) => {
          if (generation !== this.generation) return;
          if (requested) {
            this.log.add('agent', 'stopped');
            return;
          }
          this.lastExit = exit;
          this.log.add('agent', `exited (${exitText(exit)})`);
        },
      },
    );
  }

  private async initialize(
    transport: Transport,
    timeout: number,
    generation: number,
  ): Promise<Client> {
    const client = new Client(
      { name: 'advent-agent', title: 'Advent Agent', version: this.deps.version },
      { capabilities: {} },
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (generation === this.generation) this.scheduleRelist();
    });
    client.onclose = () => {
      if (generation === this.generation) this.closed();
    };
    // Protocol errors (a bad frame) are worth a log line, not a failure.
    client.onerror = (err) => {
      if (generation === this.generation) this.log.add('agent', `protocol: ${errorText(err)}`);
    };
    try {
      await client.connect(transport, { timeout });
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
    const info = client.getServerVersion();
    if (info)
      this._serverInfo = {
        // Shown on the server's row: one line, no characters that reorder or hide text.
        name: cutChars(oneLine(String(info.name)), 100),
        version: cutChars(oneLine(String(info.version)), 40),
        protocolVersion: (transport as { protocolVersion?: string }).protocolVersion,
      };
    return client;
  }

  /** `tools/list`, every page, bounded. */
  private async list(client: Client, generation: number): Promise<void> {
    if (!client.getServerCapabilities()?.tools) {
      this.setTools([], []);
      return;
    }
    const raw: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MCP_LIMITS.listPages; page += 1) {
      const result = await client.request(
        { method: 'tools/list', params: cursor ? { cursor } : {} },
        ResultSchema,
        { timeout: this.deps.timing.listTimeoutMs },
      );
      const tools = (result as { tools?: unknown }).tools;
      if (!Array.isArray(tools)) throw new StartFailure('its tools/list answer has no tool list');
      raw.push(...tools.slice(0, MCP_LIMITS.toolsPerServer + 1 - raw.length));
      const next = (result as { nextCursor?: unknown }).nextCursor;
      if (typeof next !== 'string' || next === '' || raw.length > MCP_LIMITS.toolsPerServer) break;
      cursor = next;
    }
    if (generation !== this.generation) return;
    const { tools, problems, notes } = readTools(raw);
    // Once per listing that brings a note up, not again at each re-list that keeps it.
    const noted = new Set(notes.map((n) => `${n.tool}: ${n.problem}`));
    for (const line of noted) if (!this.noted.has(line)) this.log.add('agent', line);
    this.noted = noted;
    this.setTools(tools, problems);
  }

  /**
   * The first change after a quiet spell is re-listed promptly; while changes keep coming the
   * re-lists are spaced, further apart each time (up to `relistIntervalMaxMs`), so a server that
   * never stops changing costs little, and its last change still applies.
   */
  private scheduleRelist(): void {
    const { relistDelayMs, relistIntervalMs, relistIntervalMaxMs } = this.deps.timing;
    const now = this.deps.clock.now();
    const last = Math.max(this.lastNoticeAt, this.lastRelistAt);
    const quiet = now - last >= Math.max(this.relistGap, relistIntervalMs);
    this.lastNoticeAt = now;
    if (this.relistTimer !== undefined) return;
    if (quiet) this.relistGap = 0;
    const wait = Math.max(relistDelayMs, this.lastRelistAt + this.relistGap - now);
    this.relistTimer = this.deps.clock.setTimeout(() => {
      this.relistTimer = undefined;
      this.lastRelistAt = this.deps.clock.now();
      this.relistGap = this.relistGap
        ? Math.min(this.relistGap * 2, relistIntervalMaxMs)
        : relistIntervalMs;
      void this.relist();
    }, wait);
  }

  /** One re-list at a time; notifications meanwhile make one more, not one each. */
  private async relist(): Promise<void> {
    if (this.relisting) {
      this.relistAgain = true;
      return;
    }
    const client = this.client;
    if (!client || this._state.status !== 'ready') return;
    const generation = this.generation;
    this.relisting = (async () => {
      try {
        await this.list(client, generation);
        if (generation === this.generation && this._state.status === 'ready') {
          this.log.add('agent', `tools changed: ${this._tools.length} now`);
          this.setState({ status: 'ready', tools: this._tools.length });
        }
      } catch (err) {
        this.log.add('agent', `could not list the tools again: ${errorText(err)}`);
      }
    })();
    await this.relisting;
    this.relisting = undefined;
    if (this.relistAgain) {
      this.relistAgain = false;
      await this.relist();
    }
  }

  /** The connection ended without us asking: a crash, or a server that exited. */
  private closed(): void {
    this.client = undefined;
    for (const c of this.calls) c.abort(new Error(`the MCP server '${this._config.name}' stopped`));
    this.calls.clear();
    const state = this._state;
    if (state.status === 'ready') {
      const reason =
        this.tooLarge ??
        (this.lastExit ? `exited (${exitText(this.lastExit)})` : 'the connection closed');
      if (this.deps.clock.now() - this.readyAt >= this.deps.timing.healthyResetMs)
        this.restarts = 0;
      this.scheduleRestart(this.log.redact(reason + this.stderrTail()));
    }
    // While starting, connect() sees the failure itself and says why.
  }

  private scheduleRestart(reason: string): void {
    this.restarts += 1;
    const { backoffInitialMs, backoffMaxMs, maxRestarts } = this.deps.timing;
    if (this.restarts > maxRestarts) {
      this.setTools([]);
      this.setState({
        status: 'failed',
        reason: `gave up after ${maxRestarts} restarts: ${reason}`,
      });
      return;
    }
    // ±20 % jitter so several servers that died together do not restart together.
    const base = Math.min(backoffMaxMs, backoffInitialMs * 2 ** (this.restarts - 1));
    const delay = Math.round(base * (0.8 + 0.4 * this.deps.ids.random()));
    const at = this.deps.clock.now() + delay;
    this.log.add('agent', `restarting in ${Math.ceil(delay / 1000)} s (attempt ${this.restarts})`);
    this.setState({ status: 'restarting', attempt: this.restarts, at, reason });
    this.clearTimers();
    const generation = ++this.generation;
    this.restartTimer = this.deps.clock.setTimeout(() => {
      this.restartTimer = undefined;
      if (generation === this.generation) void this.connect(true);
    }, delay);
  }

  private describeFailure(err: unknown): string {
    const message = errorText(err);
    const garbage = this.garbage.length
      ? `; it printed text that is not MCP on stdout: "${this.garbage[0]}"`
      : '';
    if (err instanceof Error && err.name === 'McpLaunchError') return message;
    if (err instanceof StartFailure) return message;
    if (this.tooLarge) return this.tooLarge;
    if (this.lastExit)
      return `it exited at once (${exitText(this.lastExit)})${this.stderrTail()}${garbage}`;
    if (/timed out|timeout/i.test(message))
      return this.garbage.length
        ? `it does not speak MCP${garbage}`
        : `it did not answer 'initialize' within ${Math.round(this.deps.timing.initializeTimeoutMs / 1000)} s`;
    if (/closed/i.test(message) && garbage) return `it does not speak MCP${garbage}`;
    return `${message}${garbage}`;
  }

  private stderrTail(): string {
    const tail = this.log.tail('stderr', 2).join(' | ');
    return tail ? `: ${tail.slice(0, 300)}` : '';
  }

  private setTools(tools: readonly ListedTool[], problems: ToolProblem[] = []): void {
    const changed = tools !== this._tools || problems.length !== this._problems.length;
    this._tools = tools;
    this._problems = problems;
    if (changed) this.events.emit('tools', tools);
  }

  private setState(state: McpServerState): void {
    this._state = state;
    this.events.emit('state', state);
  }

  private clearTimers(): void {
    this.deps.clock.clearTimeout(this.restartTimer);
    this.deps.clock.clearTimeout(this.relistTimer);
    this.restartTimer = undefined;
    this.relistTimer = undefined;
  }
}

function exitText(exit: McpExit): string {
  return exit.signal ? `signal ${exit.signal}` : `code ${String(exit.code)}`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
