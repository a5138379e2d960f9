/**
 * A XiaoZhi device session (protocols/xiaozhi.md B): the agent connects to a XiaoZhi server as if
 * it were an ESP32 device — hello, typed and voice turns, Opus both ways — and serves the user's
 * services to it as the device-side MCP server, through the one gate.
 *
 * - Each (re)connect: headers (or query parameters) → device hello → server hello within
 *   `handshakeTimeoutMs` (10 s) or the attempt fails with a clear error and the link reconnects.
 *   Each connection gets a fresh `session_id`, echoed in every later message.
 * - MCP arrives in `{"type":"mcp","payload":…}` envelopes, possibly before the server hello, and is
 *   answered by the socket's McpToolServer, on that socket only. "Registered" means the server has
 *   listed the tools (its walk reached the last page).
 * - No server handles `tools/list_changed`: after a toggle it is sent anyway and, by default, the
 *   session reconnects so the server lists again: a polite close (1000) and an immediate redial
 *   that does not grow the backoff.
 * - `system` messages (e.g. `reboot`) are shown to the user and never run.
 */
import { type Clock, systemClock } from '../../clock.js';
import type { ConnectionState } from '../../contract/connection.js';
import { type IdSource, cryptoIds } from '../../ids.js';
import { AudioBudget } from '../kit/audio-budget.js';
import { classify, preview } from '../kit/jsonrpc.js';
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
import { endVoiceUpload, sendVoiceChunk } from '../kit/voice-upload.js';
import {
  DEFAULT_WS_TIMING,
  LinkConfigError,
  WsDialer,
  type WsMessage,
  type WsTiming,
} from '../kit/ws-dialer.js';
import { ReplyAudio, VoiceUpload, downlinkRate } from './voice.js';
import { BinaryFrameError, FRAME_TYPE, type ProtocolVersion, decodeAudioFrame } from './binary.js';
import { normaliseClientId, normaliseDeviceId } from '../kit/identity.js';
import {
  type ServerMessage,
  abortMessage,
  deviceHello,
  listenMessage,
  mcpMessage,
  moodOf,
  parseServerMessage,
  pingMessage,
} from './messages.js';
import { Turns } from './turns.js';

export interface XiaozhiSessionOptions {
  /** The profile id: identifies the connection in calls, prompts and the audit log. */
  id: string;
  /** Connection display name → audit `connection`. */
  name: string;
  /** ws(s)://host:8000/xiaozhi/v1/ */
  url: string;
  /** Read on every (re)connect; absent/empty → no Authorization. */
  token?: () => Promise<string | undefined> | string | undefined;
  /** MAC aa:bb:cc:dd:ee:ff */
  deviceId: string;
  /** UUID */
  clientId: string;
  /** Binary audio framing, default 1. */
  protocolVersion?: 1 | 2 | 3;
  /** Send device-id, client-id, authorization as query parameters instead of headers. */
  authInQuery?: boolean;
  /** After a service toggle, reconnect so the server lists again (no server handles list_changed). Default true. */
  reconnectOnToolsChanged?: boolean;
  /** Send {"type":"ping"} this often while idle (0 = off, default 0). */
  keepAliveMs?: number;
  /** Hands-free listen mode for voiceStart: 'manual' (push-to-talk) or 'auto'. Default 'manual'. */
  listenMode?: 'manual' | 'auto';
  gate: Gate;
  tools: () => readonly ToolEntry[];
  serverInfo?: { name: string; version: string };
  clock?: Clock;
  ids?: IdSource;
  /** `handshakeTimeoutMs` is how long the server hello may take (10 s default). */
  timing?: Partial<WsTiming>;
}

/** What the link waits beyond the hello timeout, so ours (with the XiaoZhi wording) fires first. */
const LINK_GRACE_MS = 1000;

export class XiaozhiSession extends SessionBase implements LiveSession {
  readonly kind = 'xiaozhi' as const;
  readonly capabilities = { chat: true, voice: true, speak: false };
  readonly link: ReconnectingLink<WsMessage>;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly version: ProtocolVersion;
  private readonly helloTimeoutMs: number;
  private readonly turns: Turns;
  /** The MCP server of the current socket (`initialize` state belongs to one socket). */
  private mcp: McpToolServer;
  /** The server hello's, for this connection only. */
  private sessionId: string | undefined;
  private rate = downlinkRate(undefined).rate;
  private upload: VoiceUpload | undefined;
  private replyAudio: ReplyAudio | undefined;
  private readonly audioBudget: AudioBudget;
  /** The token read for the connect now in progress (url() reads it, headers() uses it). */
  private dialToken: string | undefined;
  /** `hello`: the server's hello is due; `keepAlive`: the next idle ping. */
  private readonly timers: NamedTimers<'hello' | 'keepAlive'>;
  private lastSentAt = 0;
  private stopped = false;

  constructor(private readonly options: XiaozhiSessionOptions) {
    super(options);
    this.clock = options.clock ?? systemClock;
    this.timers = this.store.add(new NamedTimers(this.clock));
    this.audioBudget = new AudioBudget(this.clock);
    this.ids = options.ids ?? cryptoIds;
    this.version = options.protocolVersion ?? 1;
    this.helloTimeoutMs =
      options.timing?.handshakeTimeoutMs ?? DEFAULT_WS_TIMING.handshakeTimeoutMs;
    this.turns = new Turns(this.ids);
    this.mcp = this.newMcp();
    this.link = new ReconnectingLink<WsMessage>({
      dialer: new WsDialer({ url: () => this.dialUrl(), headers: () => this.dialHeaders() }),
      awaitReady: true,
      clock: this.clock,
      ids: this.ids,
      timing: { ...options.timing, handshakeTimeoutMs: this.helloTimeoutMs + LINK_GRACE_MS },
    });

    const l = this.link.events;
    const on = this.store;
    on.add(l.on('state', (s) => this.onState(s)));
    on.add(l.on('open', (channel) => this.onOpen(channel)));
    on.add(l.on('ready', () => this.armKeepAlive()));
    on.add(
      l.on('message', ({ channel, data }) =>
        data.kind === 'text' ? this.onText(channel, data.text) : this.onBinary(channel, data.data),
      ),
    );
    on.add(l.on('issue', ({ message }) => this.log('warn', message)));

    const t = this.turns.events;
    for (const name of ['replyDelta', 'transcript', 'mood'] as const)
      on.add(t.on(name, (p) => this.events.emit(name, p)));
    on.add(
      t.on('replyDone', (p) => {
        this.freeReplyAudio(p.taskId);
        this.events.emit('replyDone', p);
      }),
    );
    on.add(
      t.on('replyInterrupted', (p) => {
        this.freeReplyAudio(p.taskId);
        this.events.emit('replyInterrupted', p);
      }),
    );
    on.add(t.on('odd', ({ message }) => this.log('warn', message)));
  }

  get state(): ConnectionState {
    return this.link.state;
  }

  /** The server's session id on this connection (undefined before its hello). */
  get currentSessionId(): string | undefined {
    return this.sessionId;
  }

  /** Where a camera-like service may post photos (`initialize` `capabilities.vision`). */
  get vision(): McpToolServer['vision'] {
    return this.mcp.vision;
  }

  start(): void {
    this.stopped = false;
    this.link.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.closeUpload('cancelled');
    this.turns.supersede();
    this.timers.clearAll();
    await this.link.stop();
    this.freeReplyAudio();
    this.store.dispose();
  }

  reregister(): void {
    if (this.stopped) return;
    if (!this.link.isOpen) {
      // The next connection lists again anyway.
      this.setRegistration({ state: 'registering' });
      return;
    }
    this.send(
      mcpMessage(this.sid(), { jsonrpc: '2.0', method: 'notifications/tools/list_changed' }),
    );
    if (this.options.reconnectOnToolsChanged === false) {
      this.setRegistration({
        state: 'failed',
        message:
          'the server was told the services changed, but XiaoZhi servers list them only when a device connects; reconnect to update them',
      });
      return;
    }
    this.setRegistration({ state: 'registering' });
    this.mcp.restartWalk();
    const why =
      'reconnecting so the server lists the services again (XiaoZhi servers ignore tools/list_changed)';
    this.log('info', why);
    this.link.reconnect(why);
  }

  /** A typed turn: `listen` `detect` with the text, which the server treats as an utterance. */
  sendText(text: string): SendResult {
    if (!text.trim()) return { ok: false, message: 'nothing to send' };
    if (!this.link.isReady) return { ok: false, message: notReady(this.link.state) };
    this.closeUpload('superseded');
    const taskId = this.beginTurn();
    this.send(listenMessage(this.sid(), 'detect', { text }));
    return { ok: true, taskId };
  }

  speak(_text: string): SendResult {
    return { ok: false, message: unsupported('xiaozhi', 'Say this') };
  }

  /**
   * A voice turn under a fresh id. A reply still playing is stopped (`abort`, reason
   * `wake_word_detected` as the firmware sends on barge-in) and its late audio dropped; then
   * `listen start` in the configured mode.
   */
  voiceStart(): SendResult {
    if (!this.link.isReady) return { ok: false, message: notReady(this.link.state) };
    this.closeUpload('superseded');
    const taskId = this.beginTurn();
    this.upload = new VoiceUpload(taskId, this.version);
    this.send(listenMessage(this.sid(), 'start', { mode: this.options.listenMode ?? 'manual' }));
    return { ok: true, taskId };
  }

  voiceChunk(taskId: string, pcm: Uint8Array): ChunkResult {
    return sendVoiceChunk(this.upload, taskId, pcm, this.link, (frame) => this.sendBinary(frame));
  }

  /** The user stopped talking: the rest goes up, then `listen stop` (push-to-talk only). */
  voiceEnd(taskId: string): ChunkResult {
    return endVoiceUpload(
      this.upload,
      taskId,
      this.link,
      (frame) => this.sendBinary(frame),
      () => {
        // In auto mode the server's VAD decides when an utterance ends.
        if ((this.options.listenMode ?? 'manual') === 'manual')
          this.send(listenMessage(this.sid(), 'stop'));
      },
    );
  }

  /** Stop without more audio, and tell the server to drop the turn. */
  voiceCancel(taskId?: string): void {
    if (taskId !== undefined && this.upload?.taskId !== taskId) return;
    this.closeUpload('cancelled');
    this.turns.supersede();
    if (this.link.isReady) this.send(abortMessage(this.sid()));
  }

  /** Barge-in: the reply playing stops (`abort`) and its late audio is dropped. */
  interrupt(): void {
    this.turns.supersede();
    if (this.link.isReady) this.send(abortMessage(this.sid()));
  }

  // --- connection ------------------------------------------------------------------------------

  private async dialUrl(): Promise<string> {
    const device = normaliseDeviceId(this.options.deviceId);
    if (!device.ok) throw new LinkConfigError(device.message);
    const client = normaliseClientId(this.options.clientId);
    if (!client.ok) throw new LinkConfigError(client.message);
    const token = (await this.options.token?.())?.trim() || undefined;
    this.dialToken = token;
    if (!this.options.authInQuery) return this.options.url;
    let url: URL;
    try {
      url = new URL(this.options.url);
    } catch {
      throw new LinkConfigError(
        `the server address is not a valid URL (expected ws://host:8000/xiaozhi/v1/)`,
      );
    }
    url.searchParams.set('device-id', device.value);
    url.searchParams.set('client-id', client.value);
    if (token) url.searchParams.set('authorization', `Bearer ${token}`);
    return url.toString();
  }

  private dialHeaders(): Record<string, string> {
    const headers: Record<string, string> = { 'Protocol-Version': String(this.version) };
    if (this.options.authInQuery) return headers;
    // dialUrl() already checked both.
    const device = normaliseDeviceId(this.options.deviceId);
    const client = normaliseClientId(this.options.clientId);
    if (device.ok) headers['Device-Id'] = device.value;
    if (client.ok) headers['Client-Id'] = client.value;
    if (this.dialToken) headers.Authorization = `Bearer ${this.dialToken}`;
    return headers;
  }

  private onOpen(channel: Channel): void {
    this.dialToken = undefined;
    this.sessionId = undefined;
    this.rate = downlinkRate(undefined).rate;
    this.mcp = this.newMcp();
    this.setRegistration({ state: 'registering' });
    this.sendOn(channel, deviceHello(this.version));
    this.timers.set('hello', this.helloTimeoutMs, () => {
      this.link.fail(
        `the XiaoZhi server sent no hello within ${Math.round(this.helloTimeoutMs / 1000)} s after connecting; check that the address is a XiaoZhi WebSocket endpoint (…/xiaozhi/v1/)`,
        { retry: true, channel },
      );
    });
  }

  private onState(s: ConnectionState): void {
    if (s.status === 'reconnecting' || s.status === 'offline') {
      this.dialToken = undefined;
      this.timers.clearAll();
      // Nothing of the old exchange will come: end its replies, close its upload.
      this.turns.interruptAll();
      this.closeUpload('lost');
      this.freeReplyAudio();
      if (s.status === 'offline' && !this.stopped && this.registrationState.state === 'registering')
        this.setRegistration({ state: 'failed', message: s.message });
    }
    this.events.emit('state', s);
  }

  private onHello(channel: Channel, msg: Extract<ServerMessage, { type: 'hello' }>): void {
    if (this.link.isReady) {
      this.log('warn', 'the server sent a second hello on this connection; ignored');
      return;
    }
    if (msg.transport !== 'websocket') {
      this.link.fail(
        `the server's hello names transport '${msg.transport ?? '(none)'}', not 'websocket'; this address does not serve XiaoZhi devices over WebSocket`,
        { retry: true, channel },
      );
      return;
    }
    this.timers.clear('hello');
    this.sessionId = msg.sessionId;
    const { rate, note } = downlinkRate(msg.sampleRate);
    this.rate = rate;
    if (note) this.log('warn', note);
    this.link.markReady(channel);
  }

  // --- incoming --------------------------------------------------------------------------------

  private onText(channel: Channel, text: string): void {
    const msg = parseServerMessage(text);
    switch (msg.type) {
      case 'invalid':
        this.log('warn', `unreadable message from the server (${msg.message}): ${preview(text)}`);
        return;
      case 'hello':
        this.onHello(channel, msg);
        return;
      case 'mcp':
        void this.onMcp(channel, msg.payload, msg.sessionId);
        return;
      case 'stt':
        this.turns.transcript(msg.text);
        return;
      case 'llm': {
        const emoji = moodOf(msg.emotion, msg.text);
        if (emoji) this.turns.mood(emoji);
        return;
      }
      case 'tts':
        this.onTts(msg.state, msg.text, text);
        return;
      case 'alert':
        this.status(msg.text);
        this.log('warn', `alert from the server: ${msg.text}`);
        return;
      case 'system': {
        const what = msg.command ? `'${msg.command}'` : preview(JSON.stringify(msg.raw));
        const line = `the server asked to run the system command ${what}; it was not run (the agent never runs server commands)`;
        this.status(line);
        this.log('warn', line);
        return;
      }
      case 'custom':
        this.status(`message from the server: ${preview(JSON.stringify(msg.raw))}`);
        this.log('info', `custom message from the server: ${preview(text)}`);
        return;
      case 'listen':
        this.events.emit('listen', { taskId: this.turns.currentTask ?? '', message: msg.raw });
        return;
      case 'pong':
        return;
      case 'other':
        this.log('warn', `message of unknown type '${msg.name}' ignored: ${preview(text)}`);
        return;
    }
  }

  private onTts(state: string, subtitle: string | undefined, raw: string): void {
    switch (state) {
      case 'start':
        this.turns.start();
        return;
      case 'sentence_start':
        if (subtitle) this.turns.sentence(subtitle);
        return;
      case 'sentence_end':
        return;
      case 'stop':
        this.turns.stop();
        // Hands-free (auto): the firmware says it listens again once the answer is spoken; the
        // microphone stream never stopped, so the next utterance goes on the same upload.
        if (this.options.listenMode === 'auto' && this.upload?.open && this.link.isReady)
          this.send(listenMessage(this.sid(), 'start', { mode: 'auto' }));
        return;
      default:
        this.log('warn', `tts message with unknown state '${state}' ignored: ${preview(raw)}`);
    }
  }

  private onBinary(channel: Channel, frame: Buffer): void {
    let unwrapped;
    try {
      unwrapped = decodeAudioFrame(this.version, frame);
    } catch (err) {
      if (!(err instanceof BinaryFrameError)) throw err;
      this.log('warn', `audio frame dropped: ${err.message}`);
      return;
    }
    if (unwrapped.type === FRAME_TYPE.JSON) {
      this.onText(channel, unwrapped.payload.toString('utf8'));
      return;
    }
    if (unwrapped.type !== FRAME_TYPE.OPUS) {
      this.log('warn', `binary frame of unknown type ${unwrapped.type} dropped`);
      return;
    }
    // Audio of a superseded reply (barge-in) is dropped here, before any decoding.
    const taskId = this.turns.audioTask();
    if (taskId === undefined) return;
    if (this.replyAudio?.taskId !== taskId) {
      this.replyAudio?.close();
      this.replyAudio = new ReplyAudio(taskId, this.rate, this.audioBudget);
    }
    const audio = this.replyAudio;
    const decoded = audio.decode(unwrapped.payload);
    if (!decoded.ok) {
      this.log('warn', decoded.message);
      return;
    }
    if (decoded.pcm.length)
      this.events.emit('audio', {
        taskId,
        seq: audio.seq++,
        data: decoded.pcm,
        sampleRate: audio.rate,
      });
  }

  /** One MCP payload: answered in the envelope, with the same id, on the socket it came on. */
  private async onMcp(
    channel: Channel,
    payload: unknown,
    envelopeSessionId: string | undefined,
  ): Promise<void> {
    const mcp = this.mcp;
    try {
      // Counted against its socket: a server cannot queue more calls than run at once.
      await channel.track(() =>
        mcp.serve(
          classify(payload),
          (response) =>
            this.sendOn(channel, mcpMessage(this.sessionId ?? envelopeSessionId ?? '', response)),
          ({ level, message }) => this.log(level, message),
          channel.gone,
        ),
      );
    } catch (err) {
      // serve() never throws; a bug there must not break the session.
      this.log('warn', `MCP message could not be handled: ${(err as Error).message}`);
    }
  }

  /** The server's walk through our tool pages ended: that is what it knows of our services. */
  private onListing(mcp: McpToolServer, listing: Listing): void {
    if (mcp !== this.mcp) return;
    this.setRegistration(
      listing.ok
        ? { state: 'registered', at: this.clock.now(), services: listing.services }
        : { state: 'failed', message: listing.message },
    );
  }

  // --- helpers ---------------------------------------------------------------------------------

  private newMcp(): McpToolServer {
    const mcp: McpToolServer = new McpToolServer({
      connection: this.ref,
      dialect: 'xiaozhi',
      gate: this.options.gate,
      tools: this.options.tools,
      serverInfo: this.options.serverInfo ?? DEFAULT_SERVER_INFO,
      listChanged: false,
      callId: () => this.ids.hex(8),
      onListing: (listing) => this.onListing(mcp, listing),
      identity: { deviceId: this.options.deviceId, clientId: this.options.clientId },
    });
    return mcp;
  }

  /** A new user turn; a reply still playing is aborted on the server too. */
  private beginTurn(): string {
    const wasPlaying = this.turns.playing;
    const taskId = this.turns.begin();
    if (wasPlaying) this.send(abortMessage(this.sid(), 'wake_word_detected'));
    return taskId;
  }

  private sid(): string {
    return this.sessionId ?? '';
  }

  /** Send on the current socket. */
  private send(message: Record<string, unknown>): boolean {
    const channel = this.link.openChannel;
    return channel ? this.sendOn(channel, message) : false;
  }

  /** Send on one socket (a greeting, an answer): false once that socket is gone. */
  private sendOn(channel: Channel, message: Record<string, unknown>): boolean {
    const sent = channel.send(JSON.stringify(message));
    if (sent) this.lastSentAt = this.clock.now();
    return sent;
  }

  private sendBinary(frame: Buffer): void {
    if (this.link.send(frame)) this.lastSentAt = this.clock.now();
  }

  /** `{"type":"ping"}` after `keepAliveMs` without anything sent (servers drop idle devices). */
  private armKeepAlive(delay = this.options.keepAliveMs ?? 0): void {
    const every = this.options.keepAliveMs ?? 0;
    if (every <= 0) return;
    this.timers.set('keepAlive', delay, () => {
      if (!this.link.isReady) return;
      const idle = this.clock.now() - this.lastSentAt;
      if (idle < every) {
        this.armKeepAlive(every - idle);
        return;
      }
      this.send(pingMessage(this.sid()));
      this.armKeepAlive(every);
    });
  }

  private closeUpload(because: 'cancelled' | 'superseded' | 'lost'): void {
    this.upload?.close(because);
  }

  private freeReplyAudio(taskId?: string): void {
    if (!this.replyAudio || (taskId !== undefined && this.replyAudio.taskId !== taskId)) return;
    this.replyAudio.close();
    this.replyAudio = undefined;
  }
}
