/**
 * Whole lines for the SDK's stdio transport (stdio and the data folder's socket). Its ReadBuffer
 * joins every piece that arrives onto the partial line before it (`Buffer.concat` of all of it),
 * so a line just under MAX_MESSAGE_BYTES written in small pieces cost work quadratic in its
 * length. Here the pieces of a line wait in a list and are joined at its newline; the transport
 * is handed one whole line per chunk, which its buffer takes in one copy.
 */
import { Transform } from 'node:stream';

/**
 * Pieces kept apart before they are joined into one block: a line sent a byte at a time would
 * otherwise be held as millions of Buffer objects. Each byte is still copied at most twice.
 */
const PIECES_PER_BLOCK = 1024;

export interface LineSplitterOptions {
  /** Most bytes of one line, its newline included. */
  maxBytes: number;
  /** A line grew past `maxBytes`: it is dropped, and so is all that follows. */
  overflow: () => void;
}

/**
 * A stream taking bytes and giving whole lines, one Buffer each (newline kept). Its readable
 * side holds one line before it stops taking bytes, so pausing it pushes back on its source.
 */
export function lineSplitter(options: LineSplitterOptions): Transform {
  /** The partial line: blocks of joined pieces, then the pieces since. */
  let blocks: Buffer[] = [];
  let pieces: Buffer[] = [];
  let pending = 0;
  let refused = false;

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

  return new Transform({
    readableObjectMode: true,
    readableHighWaterMark: 1,
    transform(chunk: Buffer, _encoding, done) {
      if (refused) return done();
      let start = 0;
      let nl: number;
      while ((nl = chunk.indexOf(0x0a, start)) >= 0) {
        if (pending + nl + 1 - start > options.maxBytes) return refuse(done);
        keep(chunk.subarray(start, nl + 1));
        this.push(take());
        start = nl + 1;
      }
      if (start < chunk.length) {
        if (pending + chunk.length - start > options.maxBytes) return refuse(done);
        keep(chunk.subarray(start));
      }
      done();
    },
  });

  function refuse(done: () => void): void {
    refused = true;
    blocks = [];
    pieces = [];
    pending = 0;
    options.overflow();
    done();
  }
}
