/**
 * A byte stream cut into lines with a bound: a line longer than `maxBytes` is never held whole —
 * its start is kept up to the bound and reported as `overlong`, the rest dropped up to the next
 * newline. So a server writing forever without a newline costs at most `maxBytes` of memory.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOverlong: (start: string, bytes: number) => void,
  ) {}

  push(chunk: Buffer): void {
    let from = 0;
    while (from < chunk.length) {
      const nl = chunk.indexOf(0x0a, from);
      const end = nl < 0 ? chunk.length : nl;
      const piece = chunk.subarray(from, end);
      if (!this.skipping) {
        if (this.size + piece.length > this.maxBytes) {
          const head = Buffer.concat([...this.parts, piece]).subarray(0, 200);
          this.onOverlong(head.toString('utf8'), this.size + piece.length);
          this.parts = [];
          this.size = 0;
          this.skipping = true;
        } else if (piece.length) {
          this.parts.push(piece);
          this.size += piece.length;
        }
      }
      if (nl < 0) break;
      if (!this.skipping) {
        const line = Buffer.concat(this.parts).toString('utf8').replace(/\r$/, '');
        this.parts = [];
        this.size = 0;
        this.onLine(line);
      }
      this.skipping = false;
      from = nl + 1;
    }
  }

  /** What is left at the end of the stream, as a last line. */
  end(): void {
    if (this.size && !this.skipping) this.onLine(Buffer.concat(this.parts).toString('utf8'));
    this.parts = [];
    this.size = 0;
  }
}
