/**
 * The XiaoZhi MCP endpoint (接入点, protocols/xiaozhi.md B′): the agent dials out to a WebSocket URL
 * that carries its token (`wss://api.xiaozhi.me/mcp/?token=…`) and is a plain MCP server there —
 * bare JSON-RPC text frames, no envelope, no hello, no audio. Same registry, same gate, same audit
 * as every other dialect; only the framing differs.
 *
 * - Registration is what the server has seen: `registering` until it has listed every page of our
 *   tools, then `registered` with the names it was given (McpToolServer follows the walk).
 * - A change of the enabled set sends `notifications/tools/list_changed` (MCP standard). Servers
 *   that ignore it never list again, so after `relistWaitMs` without a new list the link is
 *   re-dialled (a polite close, no backoff): every server lists on a new connection.
 * - Replies go only to the socket the request came on (its Channel): a call still running when the
 *   link drops is recorded by the gate but never answered on the next link (its ids mean
 *   something else there).
 * - Odd frames (not JSON, batches, huge) get a log line and, where an id can be read, an error
 *   reply; nothing a server sends can throw out of here.
 */
import { type Clock, systemClock } from '../../clock.js';
import type { ConnectionState } from '../../contract/connection.js';
import { type IdSource, cryptoIds } from '../../ids.js';
import { type JsonRpcId, RPC, classify, preview, rpcError } from '../kit/jsonrpc.js';
import { type Channel, ReconnectingLink } from '../kit/link.js';
import { DEFAULT_SERVER_INFO, type Listing, McpToolServer } from '../kit/mcp-server.js';
import {
  type ChunkResult,
  type Gate,
  type LiveSession,
  type SendResult,
  type ToolEntry,
  notReady,
  unsupported,
} from '../session.js';
import { SessionBase } from '../kit/session-base.js';
import { NamedTimers } from '../kit/timers.js';
import { WsDialer, type WsMessage, type WsTiming, redactText } from '../kit/ws-dialer.js';

export interface EndpointSessionOptions {
  /** The profile id: identifies the connection in calls, prompts and the audit log. */
  id: string;
  /** The connection's display name, shown to the user and written in the audit log. */
  name: string;
  /** `ws(s)://…/mcp/?token=…`; the token is part of the URL. Read on every (re)connect. */
  url: () => Promise<string> | string;
  gate: Gate;
  /** The enabled services (user-only ones included: the MCP server filters them). */
  tools: () => readonly ToolEntry[];
  serverInfo?: { name: string; version: string };
  clock?: Clock;
  ids?: IdSource;
  timing?: Partial<WsTiming>;
  /**
   * After `reregister()`, how long to wait for the server to list again before re-dialling so it
   * must (default 5 s; 0 never re-dials).
   */
  relistWaitMs?: number;
  /** Warn when the server has not listed our tools this long after connecting (default 30 s). */
  listWaitMs?: number;
}

/**
 * Frames above this are refused with an error reply (the Advent dialect's frame limit too); up to
 * twice that the link still reads them, so the refusal can name the request's id.
 */
export const MAX_FRAME_BYTES = 4 * 1024 * 1024;
/** Beyond this the link itself gives up on the socket (ws closes with 1009) and redials. */
const LINK_MAX_BYTES = 2 * MAX_FRAME_BYTES;

export class EndpointSession extends SessionBase implements LiveSession {
  readonly kind = 'endpoint' as const;
  readonly capabilities = { chat: false, voice: false, speak: false };
  readonly link: ReconnectingLink<WsMessage>;
  private readonly clock: Clock;
  /** One MCP server per socket: `initialize` state and `withUserTools` belong to that socket. */
  private server: McpToolServer;
  /** `list`: the server should have listed by now; `relist`: … listed again after a change. */
  private readonly timers: NamedTimers<'list' | 'relist'>;
  private callSeq = 0;

  constructor(private readonly options: EndpointSessionOptions) {
    super(options);
    this.clock = options.clock ?? systemClock;
    this.timers = this.store.add(new NamedTimers(this.clock));
    this.link = new ReconnectingLink<WsMessage>({
      dialer: new WsDialer({ url: options.url, maxMessageBytes: LINK_MAX_BYTES }),
      clock: this.clock,
      ids: options.ids ?? cryptoIds,
      timing: options.timing,
    });
    this.server = this.newServer();
    const l = this.link.events;
    const on = this.store;
    on.add(l.on('state', (s) => this.onState(s)));
    on.add(l.on('open', () => (this.server = this.newServer())));
    on.add(l.on('ready', () => this.armListWait()));
    on.add(
      l.on('message', ({ channel, data }) => {
        if (data.kind === 'text') this.onText(channel, data.text);
        else
          this.log(
            'warn',
            `a binary frame (${data.data.length} bytes) was ignored: the endpoint is text-only`,
          );
      }),
    );
    on.add(l.on('issue', ({ message }) => this.log('warn', message)));
  }

  get state(): ConnectionState {
    return this.link.state;
  }

  start(): void {
    this.link.start();
  }

  async stop(): Promise<void> {
    this.timers.clearAll();
    await this.link.stop();
    this.store.dispose();
  }

  /**
   * The enabled set changed: tell the server (MCP `notifications/tools/list_changed`) and wait for
   * it to list again; servers that ignore the notification get a fresh link after `relistWaitMs`.
   */
  reregister(): void {
    if (!this.link.isReady) return;
    this.setRegistration({ state: 'registering' });
    this.server.restartWalk();
    this.link.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }));
    this.armRelistWait();
  }

  sendText(): SendResult {
    return { ok: false, message: unsupported('endpoint', 'chat') };
  }

  speak(): SendResult {
    return { ok: false, message: unsupported('endpoint', 'speaking text') };
  }

  voiceStart(): SendResult {
    return { ok: false, message: unsupported('endpoint', 'voice') };
  }

  voiceChunk(): ChunkResult {
    return { ok: false, message: unsupported('endpoint', 'voice') };
  }

  voiceEnd(): ChunkResult {
    return { ok: false, message: unsupported('endpoint', 'voice') };
  }

  voiceCancel(): void {
    // Nothing to cancel: there is never a voice turn here.
  }

  interrupt(): void {
    // Nothing plays on an endpoint connection.
  }

  // -------------------------------------------------------------------------------------------

  private newServer(): McpToolServer {
    const server: McpToolServer = new McpToolServer({
      connection: this.ref,
      dialect: 'endpoint',
      gate: this.options.gate,
      tools: this.options.tools,
      serverInfo: this.options.serverInfo ?? DEFAULT_SERVER_INFO,
      listChanged: true,
      callId: () => `call-${++this.callSeq}`,
      onListing: (listing) => this.onListing(server, listing),
    });
    return server;
  }

  private onState(s: ConnectionState): void {
    if (s.status !== 'ready') this.timers.clearAll();
    // A new link means a new MCP session: nothing is registered until the server lists again.
    if (s.status === 'connecting' || s.status === 'reconnecting') {
      if (this.registrationState.state !== 'registering')
        this.setRegistration({ state: 'registering' });
    } else if (s.status === 'offline' && s.reason !== 'stopped') {
      // A refused or unusable link is a failure worth showing; a stop the user asked for is not.
      this.setRegistration({ state: 'failed', message: notReady(s) });
    }
    this.events.emit('state', s);
  }

  private onText(channel: Channel, text: string): void {
    const reply = (response: Record<string, unknown>) => this.reply(channel, response);
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_FRAME_BYTES) {
      const id = readId(text);
      this.log(
        'warn',
        `a ${bytes}-byte frame was ignored (limit ${MAX_FRAME_BYTES} bytes): ${preview(text, 80)}`,
      );
      if (id !== undefined)
        reply(
          rpcError(
            id,
            RPC.INVALID_REQUEST,
            `message too large (${bytes} bytes; limit ${MAX_FRAME_BYTES})`,
          ),
        );
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      // Not JSON: there is no id to answer, so a log line is all it gets.
      this.log(
        'warn',
        `a frame that is not JSON was ignored (${(err as Error).message}): ${preview(text, 120)}`,
      );
      return;
    }
    if (Array.isArray(value)) {
      // MCP (2025-06-18) has no batches and no XiaoZhi server sends them: refuse each request.
      this.log('warn', `a JSON-RPC batch of ${value.length} was refused: ${preview(text, 120)}`);
      for (const item of value) {
        const m = classify(item);
        if (m.kind === 'request')
          reply(
            rpcError(
              m.id,
              RPC.INVALID_REQUEST,
              'batches are not supported: send one message per frame',
            ),
          );
      }
      return;
    }
    void this.handle(channel, value);
  }

  private async handle(channel: Channel, value: unknown): Promise<void> {
    const msg = classify(value);
    const server = this.server;
    // Counted against its socket: a server cannot queue more calls than run at once.
    await channel.track(() =>
      server.serve(
        msg,
        (response) => this.reply(channel, response),
        ({ level, message }) => this.log(level, message),
        channel.gone,
      ),
    );
  }

  /** The server's walk through our tool pages ended: that is what it knows of our services. */
  private onListing(server: McpToolServer, listing: Listing): void {
    if (server !== this.server) return;
    if (!listing.ok) {
      this.log('warn', listing.message);
      if (this.registrationState.state === 'registering')
        this.setRegistration({ state: 'failed', message: listing.message });
      return;
    }
    this.timers.clear('list');
    this.timers.clear('relist');
    this.setRegistration({ state: 'registered', at: this.clock.now(), services: listing.services });
  }

  /**
   * Answer on the socket the request came on. Once that socket is gone its server forgot the id,
   * and a new server could mistake our reply for the answer to one of its own requests.
   */
  private reply(channel: Channel, response: Record<string, unknown>): boolean {
    if (channel.send(JSON.stringify(response))) return true;
    this.log(
      'info',
      `a reply for id ${String(response.id)} was dropped: the connection it was for is gone`,
    );
    return false;
  }

  /** A server that never lists leaves the user staring at "registering…": say what is wrong. */
  private armListWait(): void {
    const ms = this.options.listWaitMs ?? 30_000;
    if (ms <= 0 || this.registrationState.state === 'registered') return;
    this.timers.set('list', ms, () => {
      if (this.registrationState.state !== 'registering') return;
      this.setRegistration({
        state: 'failed',
        message: `connected, but the server has not asked for the services within ${seconds(ms)}; check that the URL is an MCP endpoint address`,
      });
    });
  }

  private armRelistWait(): void {
    const ms = this.options.relistWaitMs ?? 5000;
    this.timers.clear('relist');
    if (ms <= 0) return;
    this.timers.set('relist', ms, () => {
      if (this.registrationState.state !== 'registering' || !this.link.isReady) return;
      // Dropping the link would cut off calls in progress; try again once they are answered.
      const channel = this.link.openChannel;
      if (channel && channel.inFlight > 0) return this.armRelistWait();
      this.log(
        'info',
        'the server did not list the services again after the change: reconnecting so it does',
      );
      this.link.reconnect('reconnecting so the server sees the changed services');
    });
  }

  protected override log(level: 'info' | 'warn', message: string): void {
    // Server text is quoted in some lines; a URL in it never shows its token.
    super.log(level, redactText(message));
  }
}

/** The id of a frame too large to handle, when it parses; otherwise nothing to answer. */
function readId(text: string): JsonRpcId | undefined {
  try {
    const m = classify(JSON.parse(text));
    return m.kind === 'request' || m.kind === 'invalid' ? m.id : undefined;
  } catch {
    return undefined;
  }
}

function seconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}
