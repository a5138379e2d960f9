/**
 * A test page on the WebSocket bridge, made with the `ws` client (a browser's messages, with the
 * headers a browser would send), plus raw HTTP requests that keep the target exactly as written.
 */
import { request } from 'node:http';
import { WebSocket } from 'ws';
import { BRIDGE_PATH, type BridgeDown, decodeAudioFrame } from '../../../app/contract/bridge.js';
import type { CommandError, EventName, EventPayloads } from '../../../app/contract/commands.js';
import { until } from '../../helpers/wait.js';

type Result = { ok: true; value: unknown } | { ok: false; error: CommandError };
type EventMessage = Extract<BridgeDown, { t: 'event' }>;

export class Page {
  readonly messages: BridgeDown[] = [];
  readonly audio: EventPayloads['audio'][] = [];
  closed: { code: number; reason: string } | undefined;
  private nextId = 1;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) {
        const frame = decodeAudioFrame(
          data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer,
        );
        if (frame) this.audio.push(frame);
        return;
      }
      this.messages.push(JSON.parse(data.toString('utf8')) as BridgeDown);
    });
    ws.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
  }

  /** Send one call and wait for its one result. */
  async call(method: string, ...args: unknown[]): Promise<Result> {
    const id = this.nextId++;
    this.ws.send(JSON.stringify({ t: 'call', id, method, args }));
    let found: BridgeDown | undefined;
    await until(() => {
      found = this.messages.find((m) => m.t === 'result' && m.id === id);
      return found !== undefined;
    }, `result of ${method}`);
    const results = this.messages.filter((m) => m.t === 'result' && m.id === id);
    if (results.length !== 1) throw new Error(`${results.length} results for call ${id}`);
    return found as Result;
  }

  events<K extends EventName>(name: K): EventPayloads[K][] {
    return this.messages
      .filter((m): m is EventMessage => m.t === 'event' && m.name === name)
      .map((m) => m.payload as EventPayloads[K]);
  }

  async event<K extends EventName>(
    name: K,
    pred: (payload: EventPayloads[K]) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<EventPayloads[K]> {
    let found: EventPayloads[K] | undefined;
    await until(
      () => {
        found = this.events(name).find(pred);
        return found !== undefined;
      },
      `a '${name}' event`,
      timeoutMs,
    );
    return found!;
  }

  async closedWith(): Promise<{ code: number; reason: string }> {
    await until(() => this.closed !== undefined, 'the socket to close');
    return this.closed!;
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}

export interface BridgeTarget {
  port: number;
  token?: string | null;
  origin?: string | null;
  path?: string;
}

function bridgeUrl({ port, token, path = BRIDGE_PATH }: BridgeTarget): string {
  return `ws://127.0.0.1:${port}${path}${token ? `?token=${token}` : ''}`;
}

function bridgeHeaders({ port, origin }: BridgeTarget): Record<string, string> {
  const o = origin === undefined ? `http://127.0.0.1:${port}` : origin;
  return o === null ? {} : { Origin: o };
}

/** Open the bridge as a page would; rejects if the server refuses. */
export function openPage(target: BridgeTarget): Promise<Page> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(bridgeUrl(target), { headers: bridgeHeaders(target) });
    const page = new Page(ws);
    ws.once('open', () => resolve(page));
    ws.once('error', reject);
  });
}

/** The HTTP status the server answers an upgrade it refuses with (101 means it was accepted). */
export function upgradeStatus(target: BridgeTarget): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(bridgeUrl(target), { headers: bridgeHeaders(target) });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      ws.terminate();
      resolve(res.statusCode ?? 0);
    });
    ws.once('open', () => {
      ws.terminate();
      resolve(101);
    });
    ws.once('error', (err) => {
      if (!/terminated before/.test(err.message)) reject(err);
    });
  });
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** GET with the target sent as written (no `..` resolution) and a chosen Host header. */
export function httpGet(
  port: number,
  target: string,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: target,
        method: 'GET',
        headers: { Host: `127.0.0.1:${port}`, ...headers },
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
