/**
 * Compact storage for the audit index: one typed array per field, grown a chunk at a time, so a
 * record costs a few dozen bytes instead of a JavaScript object, nothing is copied as the log
 * grows, and the unused tail is at most one chunk.
 */
const CHUNK_BITS = 12;
export const CHUNK_SIZE = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK_SIZE - 1;

type NumberArray = Float64Array | Uint32Array;

/** Numbers by position (seq, epoch ms, byte offsets: Float64; line lengths: Uint32). */
export class NumberColumn {
  private readonly chunks: NumberArray[] = [];

  constructor(private readonly make: (length: number) => NumberArray) {}

  get(i: number): number {
    return (this.chunks[i >>> CHUNK_BITS] as NumberArray)[i & CHUNK_MASK] as number;
  }

  set(i: number, value: number): void {
    const c = i >>> CHUNK_BITS;
    let chunk = this.chunks[c];
    if (!chunk) {
      chunk = this.make(CHUNK_SIZE);
      this.chunks[c] = chunk;
    }
    chunk[i & CHUNK_MASK] = value;
  }

  get bytes(): number {
    let total = 0;
    for (const chunk of this.chunks) total += chunk.byteLength;
    return total;
  }
}

type IdArray = Uint8Array | Uint16Array | Uint32Array;

/**
 * Small non-negative integers by position. Each chunk starts as bytes and widens on its own when
 * an id no longer fits, so the common case (a handful of services, connections, decisions) costs
 * one byte per record while a log with thousands of distinct values still works.
 */
export class IdColumn {
  private readonly chunks: IdArray[] = [];

  get(i: number): number {
    return (this.chunks[i >>> CHUNK_BITS] as IdArray)[i & CHUNK_MASK] as number;
  }

  set(i: number, id: number): void {
    const c = i >>> CHUNK_BITS;
    let chunk = this.chunks[c] ?? new Uint8Array(CHUNK_SIZE);
    if (id > 0xffff && !(chunk instanceof Uint32Array)) chunk = Uint32Array.from(chunk);
    else if (id > 0xff && chunk instanceof Uint8Array) chunk = Uint16Array.from(chunk);
    this.chunks[c] = chunk;
    chunk[i & CHUNK_MASK] = id;
  }

  get bytes(): number {
    let total = 0;
    for (const chunk of this.chunks) total += chunk.byteLength;
    return total;
  }
}

/** The id of every string an Interner had no room left for. */
export const OVERFLOW_ID = 0xffffffff;

/**
 * Each distinct string once, numbered in order of first sight, within a budget of bytes: names
 * come from servers, and a server inventing a new method name per call must not grow the index by
 * a string per call. Past the budget, new strings all get OVERFLOW_ID; a filter on one of them is
 * then decided on the record itself (query.ts).
 */
export class Interner {
  private readonly ids = new Map<string, number>();
  /** The strings by id (a live view: it grows as strings are added). */
  readonly values: readonly string[] = [];
  private textBytes = 0;
  /** Some string was refused for lack of room: a string not found may still be in a record. */
  overflowed = false;

  constructor(private readonly maxBytes = Number.POSITIVE_INFINITY) {}

  id(value: string): number {
    let id = this.ids.get(value);
    if (id === undefined) {
      const cost = 2 * value.length + PER_STRING;
      if (this.bytes + cost > this.maxBytes) {
        this.overflowed = true;
        return OVERFLOW_ID;
      }
      id = this.values.length;
      this.ids.set(value, id);
      (this.values as string[]).push(value);
      this.textBytes += 2 * value.length;
    }
    return id;
  }

  /** The id of `value`, or undefined when no record has it (so a filter on it matches nothing). */
  find(value: string): number | undefined {
    return this.ids.get(value);
  }

  /** The strings (UTF-16) plus a rough 64 bytes per entry for the string headers and the map. */
  get bytes(): number {
    return this.textBytes + PER_STRING * this.values.length;
  }
}

const PER_STRING = 64;
