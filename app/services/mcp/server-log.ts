/**
 * A server's recent log for the log view: its stderr, stdout lines that were not MCP, and the
 * agent's own lines about it (started, exited, restarting). A ring of bounded lines; every known
 * secret value of the server is masked before a line is kept, so the view never shows one even
 * when a server prints its own environment.
 */
import type { McpLogLine } from '../../contract/mcp.js';
import { cutChars, MCP_LIMITS } from './limits.js';

export class ServerLog {
  private readonly lines: McpLogLine[] = [];
  private start = 0;
  private secrets: string[] = [];

  constructor(private readonly now: () => number) {}

  /** Values to mask from now on (secrets shorter than 4 characters would mask too much text). */
  setSecrets(values: readonly string[]): void {
    this.secrets = [...new Set(values.filter((v) => v.length >= 4))].sort(
      (a, b) => b.length - a.length,
    );
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join('••••');
    return out;
  }

  add(stream: McpLogLine['stream'], text: string): McpLogLine {
    const line = {
      at: this.now(),
      stream,
      // Cut after masking: a cut could otherwise leave half a secret that no longer matches.
      text: cutChars(
        this.redact(text.slice(0, MCP_LIMITS.logLineChars * 4)),
        MCP_LIMITS.logLineChars,
      ),
    };
    if (this.lines.length < MCP_LIMITS.logLines) this.lines.push(line);
    else {
      this.lines[this.start] = line;
      this.start = (this.start + 1) % MCP_LIMITS.logLines;
    }
    return line;
  }

  /** Oldest first. */
  list(): McpLogLine[] {
    return [...this.lines.slice(this.start), ...this.lines.slice(0, this.start)];
  }

  /** The last few lines of one stream, for a failure reason ("exited: <last stderr line>"). */
  tail(stream: McpLogLine['stream'], n: number): string[] {
    return this.list()
      .filter((l) => l.stream === stream)
      .slice(-n)
      .map((l) => l.text);
  }
}
