/**
 * Whole lines for the SDK's stdio transport (stdio and the data folder's socket). Its ReadBuffer
 * joins every piece that arrives onto the partial line before it (`Buffer.concat` of all of it),
 * so a line just under MAX_MESSAGE_BYTES written in small pieces cost work quadratic in its
 * length. Here the pieces of a line wait in a list and are joined at its newline; the transport
 * is handed one whole line per chunk, which its buffer takes in one copy.
 *
 * A line past the bound is dropped as it comes, and the lines after it are read as before: one
 * oversized message (a model writing a large file) is the client's to be told of, not the end of
 * its session. Only its first and last bytes are kept, for the caller to answer it (socket.ts).
 */
import { Transform } from 'node:stream';

/**
 * Pieces kept apart before they are joined into one block: a line sent a byte at a time would
 * otherwise be held as millions of Buffer objects. Each byte is still copied at most twice.
 */
const PIECES_PER_BLOCK = 1024;
/** How much of a refused line's start and end is kept, for the caller to find who sent it. */
export const REFUSED_EDGE_BYTES = 128;

/** A line past the bound: its first and last REFUSED_EDGE_BYTES at most (newline included). */
export interface RefusedLine {
  head: Buffer;
  tail: Buffer;
}

export interface LineSplitterOptions {
  /** Most bytes of one line, its newline included. */
  maxBytes: number;
  /**
   * A line grew past `maxBytes`: it was dropped, byte by byte as it came, and lines go on after
   * its newline. Called at that newline (a refused line the stream ends in is not told).
   */
  overflow: (line: RefusedLine) => void;
}

/**
 * A stream taking bytes and giving whole lines, one Buffer each (newline kept). Its readable
 * side holds one line before it stops taking bytes, so pausing it pushes back on its source.
 * It never holds more than `maxBytes` of a line (plus the edges of one it is refusing).
 */
export function lineSplitter(options: LineSplitterOptions): Transform {
  /** The partial line: blocks of joined pieces, then the pieces since. */
  let blocks: Buffer[] = [];
  let pieces: Buffer[] = [];
  let pending = 0;
  /** The line being dropped, while its newline has not come. */
  let refusing: RefusedLine | undefined;

  const keep = (piece: Buffer): void => {
    pieces.push(piece);
    pending += piece.length;
    if (pieces.length < PIECES_PER_BLOCK) return;
    blocks.push(Buffer.concat(pieces));
    pieces = [];
  };
  const take = (): Buffer => {
    const parts = blocks.length === 0 ? pieces : [...blocks, ...pieces];
    const line = parts.length === 1 ? parts[0]! : Buffer.concat(parts, pending);
    blocks = [];
    pieces = [];
    pending = 0;
    return line;
  };
  /**
   * The partial line (and `segment`, its next bytes) is past the bound: keep its edges only. The
   * tail so far is what was kept; the caller adds `segment` and what follows.
   */
  const refuse = (segment: Buffer): RefusedLine => {
    const parts = [...blocks, ...pieces];
    const head = firstBytes([...parts, segment], REFUSED_EDGE_BYTES);
    const tail = lastBytes(parts, REFUSED_EDGE_BYTES);
    blocks = [];
    pieces = [];
    pending = 0;
    return { head, tail };
  };

  return new Transform({
    readableObjectMode: true,
    readableHighWaterMark: 1,
    transform(chunk: Buffer, _encoding, done) {
      for (let start = 0; start < chunk.length;) {
        const nl = chunk.indexOf(0x0a, start);
        const end = nl < 0 ? chunk.length : nl + 1;
        const segment = chunk.subarray(start, end);
        start = end;
        if (!refusing && pending + segment.length > options.maxBytes) refusing = refuse(segment);
        if (refusing) {
          refusing.tail = lastBytes([refusing.tail, segment], REFUSED_EDGE_BYTES);
          if (nl < 0) continue;
          const refused = refusing;
          refusing = undefined;
          options.overflow(refused);
        } else {
          keep(segment);
          if (nl >= 0) this.push(take());
        }
      }
      done();
    },
  });
}

/** The first `n` bytes of `parts` joined, copying no more than that. */
function firstBytes(parts: readonly Buffer[], n: number): Buffer {
  const out: Buffer[] = [];
  let got = 0;
  for (const part of parts) {
    if (got >= n) break;
    const piece = part.subarray(0, n - got);
    out.push(piece);
    got += piece.length;
  }
  return Buffer.concat(out, got);
}

/** The last `n` bytes of `parts` joined, copying no more than that. */
function lastBytes(parts: readonly Buffer[], n: number): Buffer {
  const out: Buffer[] = [];
  let got = 0;
  for (let i = parts.length - 1; i >= 0 && got < n; i--) {
    const part = parts[i]!;
    const piece = part.subarray(Math.max(0, part.length - (n - got)));
    out.unshift(piece);
    got += piece.length;
  }
  return Buffer.concat(out, got);
}
