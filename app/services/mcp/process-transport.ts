/**
 * The MCP stdio transport over an McpProcess from any launcher (the SDK's own
 * StdioClientTransport spawns by itself, which the packaged desktop app cannot do). One JSON-RPC
 * message per line on stdout; a line that is not one — a server printing a banner or debug output
 * on stdout, a common bug — is reported and skipped instead of breaking the session. stderr goes
 * to the server's log, line by line.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpExit, McpProcess } from './launcher.js';
import { LineSplitter } from './lines.js';
import { MCP_LIMITS } from './limits.js';

export interface ProcessTransportHooks {
  stderr(line: string): void;
  /** A stdout line that is not a JSON-RPC message (its start). */
  garbage(line: string): void;
  /** `requested`: we stopped it (close), so the exit says nothing about the server. */
  exit(exit: McpExit, requested: boolean): void;
  /** It is closed because it stopped reading what we send it (the reason, for its row). */
  notReading?(reason: string): void;
}

/**
 * What may wait in our memory for a server to read it: room for two of the largest messages. A
 * server that reads at all never comes near it (its pipe takes 64 KB at a time).
 */
export const MAX_QUEUED_BYTES = 2 * MCP_LIMITS.messageBytes;

const NOT_READING = `it is not reading its input (over ${MAX_QUEUED_BYTES / (1024 * 1024)} MB of messages to it wait unread)`;

export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private proc: McpProcess | undefined;
  private closed = false;
  private closing = false;
  /** Sends waiting for the server to read what is queued for it (one promise for them all). */
  private drained: Promise<void> | undefined;
  private releaseDrained: (() => void) | undefined;

  constructor(
    private readonly launch: () => Promise<McpProcess>,
    private readonly hooks: ProcessTransportHooks,
  ) {}

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  async start(): Promise<void> {
    const proc = await this.launch();
    this.proc = proc;
    const out = new LineSplitter(
      MCP_LIMITS.messageBytes,
      (line) => this.line(line),
      (start, bytes) => this.hooks.garbage(`(a line of ${bytes}+ bytes was dropped) ${start}`),
    );
    proc.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    proc.stdout.on('error', () => undefined);
    if (proc.stderr) {
      const err = new LineSplitter(
        MCP_LIMITS.logLineChars * 4,
        (line) => this.hooks.stderr(line),
        (start) => this.hooks.stderr(`${start}…`),
      );
      proc.stderr.on('data', (chunk: Buffer) => err.push(chunk));
      proc.stderr.on('end', () => err.end());
      proc.stderr.on('error', () => undefined);
    }
    void proc.exited.then((exit) => {
      this.hooks.exit(exit, this.closing);
      this.finish();
    });
  }

  private line(line: string): void {
    const text = line.trim();
    if (text === '') return;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.hooks.garbage(text);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(json);
    if (!parsed.success) {
      this.hooks.garbage(text);
      return;
    }
    this.onmessage?.(parsed.data);
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.proc?.stdin;
    if (!stdin || this.closed || this.closing || stdin.destroyed || !stdin.writable)
      return Promise.reject(new Error('the server process is not running'));
    const ok = stdin.write(`${JSON.stringify(message)}\n`);
    // A server that stops reading its stdin while it sends requests (each answered by the SDK)
    // would keep every answer in our memory: past the bound it is closed, and the row says why.
    if (stdin.writableLength > MAX_QUEUED_BYTES) {
      if (!this.closing) {
        this.hooks.notReading?.(NOT_READING);
        void this.close();
      }
      return Promise.reject(new Error(`the MCP server was closed: ${NOT_READING}`));
    }
    // Backpressure: a server that reads slowly is not buried under our writes. One waiter for
    // every send that finds the pipe full, released when it drains or the server is gone.
    if (ok) return Promise.resolve();
    this.drained ??= new Promise<void>((resolve) => {
      const done = () => {
        stdin.off('drain', done);
        stdin.off('close', done);
        this.releaseDrained = undefined;
        this.drained = undefined;
        resolve();
      };
      this.releaseDrained = done;
      stdin.on('drain', done);
      stdin.on('close', done);
    });
    return this.drained;
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.proc?.kill();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.releaseDrained?.();
    this.onclose?.();
  }
}
