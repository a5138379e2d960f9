import { type Socket, connect } from 'node:net';
import {
  type DecodeIssue,
  type Frame,
  FrameDecoder,
  FrameType,
  type KnownFrameType,
  SYSTEM_TASK,
  encodeFrame,
} from '../../app/wire/advent/frame.js';

/**
 * The smallest client that speaks the wire: a socket and the codec, nothing of the agent's own
 * connection code, so the simulator's tests do not depend on what they are meant to test.
 */
export class RawClient {
  readonly frames: Frame[] = [];
  readonly issues: DecodeIssue[] = [];
  /** The server ended or closed the connection. */
  ended = false;
  closed = false;
  private readonly decoder: FrameDecoder;
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly waiters = new Set<() => void>();

  private constructor(
    readonly socket: Socket,
    maxFrameBytes?: number,
  ) {
    this.decoder = new FrameDecoder({ maxFrameBytes, onIssue: (i) => this.issues.push(i) });
    socket.on('data', (chunk: Buffer) => {
      this.take(this.decoder.push(chunk));
      clearTimeout(this.flushTimer);
      if (this.decoder.hasTentative) {
        this.flushTimer = setTimeout(() => this.take(this.decoder.flush()), 20);
      }
    });
    socket.on('end', () => {
      this.ended = true;
      this.take(this.decoder.finish());
    });
    socket.on('close', () => {
      this.closed = true;
      clearTimeout(this.flushTimer);
      this.poke();
    });
    socket.on('error', () => {});
  }

  static connect(port: number, options: { maxFrameBytes?: number } = {}): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1' }, () => {
        socket.off('error', reject);
        resolve(new RawClient(socket, options.maxFrameBytes));
      });
      socket.once('error', reject);
    });
  }

  send(type: KnownFrameType, taskId: string, seq: number, payload: string | Uint8Array = ''): void {
    this.socket.write(encodeFrame(type, taskId, seq, payload));
  }

  raw(bytes: Uint8Array | string): void {
    this.socket.write(bytes);
  }

  auth(token = 'tok-abcdefgh', params: Record<string, string> = {}): void {
    const tail = Object.entries(params).map(([k, v]) => `##${k}:${v}`);
    this.send(FrameType.AUTH, SYSTEM_TASK, 0, token + tail.join(''));
  }

  status(text: string): void {
    this.send(FrameType.STATUS, SYSTEM_TASK, 0, text);
  }

  mcp(body: unknown, taskId = 'mcp00001'): void {
    this.send(FrameType.MCP, taskId, 0, JSON.stringify(body));
  }

  register(services: Record<string, unknown>): void {
    this.mcp({ type: 'register', data: { services } });
  }

  result(callId: string, result: { success: boolean; data?: unknown; error?: string }): void {
    this.mcp({ type: 'result', data: { call_id: callId, result } });
  }

  textTurn(taskId: string, text: string): void {
    this.send(FrameType.TEXT, taskId, 0, text);
    this.send(FrameType.END, taskId, 1);
  }

  /** The first frame (already here or to come) matching `pred`. */
  waitFrame(pred: (f: Frame) => boolean, timeoutMs = 3000): Promise<Frame> {
    return this.until(() => this.frames.find(pred), timeoutMs, 'no matching frame');
  }

  /** The frames of one task up to and including its END_FRAME. */
  async waitReply(taskId: string, timeoutMs = 3000): Promise<Frame[]> {
    await this.waitFrame((f) => f.type === FrameType.END && f.taskId === taskId, timeoutMs);
    return this.frames.filter((f) => f.taskId === taskId);
  }

  waitClose(timeoutMs = 3000): Promise<void> {
    return this.until(() => (this.closed ? true : undefined), timeoutMs, 'still open').then(
      () => undefined,
    );
  }

  destroy(): void {
    clearTimeout(this.flushTimer);
    this.socket.destroy();
  }

  private take(frames: Frame[]): void {
    if (frames.length === 0) return;
    this.frames.push(...frames);
    this.poke();
  }

  private poke(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private until<T>(probe: () => T | undefined, timeoutMs: number, why: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const value = probe();
        if (value === undefined) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(value);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`RawClient: ${why} after ${timeoutMs} ms; frames: ${this.describe()}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  private describe(): string {
    return (
      this.frames
        .map((f) => `${f.type}:'${f.taskId}'/${f.seq}:${f.payload.toString('utf8').slice(0, 40)}`)
        .join(' | ') || '(none)'
    );
  }
}

export const textOf = (frames: Frame[]): string =>
  Buffer.concat(frames.filter((f) => f.type === FrameType.TEXT).map((f) => f.payload)).toString(
    'utf8',
  );
