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
}

export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private proc: McpProcess | undefined;
  private closed = false;
  private closing = false;

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
    if (!stdin || this.closed || stdin.destroyed || !stdin.writable)
      return Promise.reject(new Error('the server process is not running'));
    return new Promise((resolve, reject) => {
      const ok = stdin.write(`${JSON.stringify(message)}\n`, (err) => {
        if (err) reject(err);
      });
      // Backpressure: a server that reads slowly is not buried under our writes.
      if (ok) resolve();
      else stdin.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.proc?.kill();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
