/** The echo server the echo dialect talks to (loopback, for tests). */
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

export class EchoServer {
  /** Every hello's tool names, in order. */
  readonly hellos: string[][] = [];
  readonly said: string[] = [];
  private socket: WebSocket | undefined;
  private readonly results = new Map<string, (r: unknown) => void>();
  private seq = 0;

  private constructor(private readonly wss: WebSocketServer) {
    wss.on('connection', (ws, req) => {
      const prefix = new URL(req.url ?? '/', 'ws://x').searchParams.get('prefix') ?? 'echo';
      this.socket = ws;
      ws.on('message', (data) => {
        const msg = JSON.parse(String(data)) as {
          type: string;
          id?: string;
          text?: string;
          tools?: { name: string }[];
        };
        if (msg.type === 'hello') this.hellos.push((msg.tools ?? []).map((t) => t.name));
        if (msg.type === 'say') {
          this.said.push(msg.text ?? '');
          ws.send(JSON.stringify({ type: 'reply', id: msg.id, text: `${prefix}: ${msg.text}` }));
        }
        if (msg.type === 'result' && msg.id) this.results.get(msg.id)?.(msg);
      });
    });
  }

  static async start(): Promise<EchoServer> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    return new EchoServer(wss);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/echo`;
  }

  /** Call one of the agent's services as the AI behind a server would. */
  call(name: string, args: Record<string, unknown>): Promise<unknown> {
    const id = `c${++this.seq}`;
    return new Promise((resolve, reject) => {
      if (!this.socket) return reject(new Error('no agent is connected'));
      this.results.set(id, resolve);
      this.socket.send(JSON.stringify({ type: 'call', id, name, args }));
    });
  }

  async stop(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}
