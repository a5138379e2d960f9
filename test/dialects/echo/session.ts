/**
 * The echo dialect's session, on the shared wire kit. Its wire protocol (JSON text frames):
 *   agent → server  {"type":"hello","tools":[…]}             on every (re)connect and re-register
 *                   {"type":"say","id":"<task>","text":"…"}  a chat turn
 *                   {"type":"result","id":"…","ok":…,…}      the answer to a call
 *   server → agent  {"type":"reply","id":"<task>","text":"…"}
 *                   {"type":"call","id":"…","name":"…","args":{…}}
 */
import type { ConnectionState } from '../../../app/contract/connection.js';
import type { IdSource } from '../../../app/ids.js';
import type { Clock } from '../../../app/clock.js';
import { type Channel, ReconnectingLink } from '../../../app/wire/kit/link.js';
import { SessionBase } from '../../../app/wire/kit/session-base.js';
import { WsDialer, type WsMessage, type WsTiming } from '../../../app/wire/kit/ws-dialer.js';
import {
  type ChunkResult,
  type Gate,
  type LiveSession,
  type SendResult,
  type ToolEntry,
  notReady,
} from '../../../app/wire/session.js';

export interface EchoSessionOptions {
  id: string;
  name: string;
  url: string;
  gate: Gate;
  tools: () => readonly ToolEntry[];
  clock: Clock;
  ids: IdSource;
  timing?: Partial<WsTiming>;
}

export class EchoSession extends SessionBase implements LiveSession {
  readonly kind = 'echo';
  readonly capabilities = { chat: true, voice: false, speak: false };
  private readonly link: ReconnectingLink<WsMessage>;

  constructor(private readonly options: EchoSessionOptions) {
    super(options);
    this.link = new ReconnectingLink<WsMessage>({
      dialer: new WsDialer({ url: () => options.url }),
      clock: options.clock,
      ids: options.ids,
      timing: options.timing,
    });
    this.link.events.on('state', (s) => this.events.emit('state', s));
    this.link.events.on('ready', () => this.reregister());
    this.link.events.on('message', ({ channel, data }) => {
      if (data.kind === 'text') void this.onText(channel, data.text);
    });
  }

  get state(): ConnectionState {
    return this.link.state;
  }

  start(): void {
    this.link.start();
  }

  stop(): Promise<void> {
    return this.link.stop();
  }

  reregister(): void {
    const tools = this.options.tools().filter((t) => !t.userOnly);
    const sent = this.link.send(JSON.stringify({ type: 'hello', tools }));
    this.setRegistration(
      sent
        ? { state: 'registered', at: this.options.clock.now(), services: tools.map((t) => t.name) }
        : { state: 'registering' },
    );
  }

  sendText(text: string): SendResult {
    if (!this.link.isReady) return { ok: false, message: notReady(this.link.state) };
    const taskId = this.options.ids.hex(8);
    this.link.send(JSON.stringify({ type: 'say', id: taskId, text }));
    return { ok: true, taskId };
  }

  speak(): SendResult {
    return { ok: false, message: 'an echo server cannot speak a given text' };
  }

  voiceStart(): SendResult {
    return { ok: false, message: 'an echo server has no voice' };
  }

  voiceChunk(): ChunkResult {
    return { ok: false, message: 'an echo server has no voice' };
  }

  voiceEnd(): ChunkResult {
    return { ok: false, message: 'an echo server has no voice' };
  }

  voiceCancel(): void {}

  interrupt(): void {}

  /** A call is answered on the socket it came on (`channel`), never on a newer one. */
  private async onText(channel: Channel, text: string): Promise<void> {
    let msg: { type?: unknown; id?: unknown; text?: unknown; name?: unknown; args?: unknown };
    try {
      msg = JSON.parse(text) as typeof msg;
    } catch {
      this.log('warn', 'the echo server sent something that is not JSON');
      return;
    }
    if (msg.type === 'reply' && typeof msg.id === 'string' && typeof msg.text === 'string') {
      this.events.emit('replyDelta', { taskId: msg.id, text: msg.text });
      this.events.emit('replyDone', { taskId: msg.id, text: msg.text });
      return;
    }
    if (msg.type === 'call' && typeof msg.id === 'string' && typeof msg.name === 'string') {
      const result = await this.options.gate.dispatch({
        connection: this.ref,
        dialect: 'echo',
        callId: msg.id,
        service: msg.name,
        params: msg.args ?? {},
      });
      channel.send(JSON.stringify({ type: 'result', id: msg.id, ...result }));
    }
  }
}
