import * as crypto from 'node:crypto';
import { createHash, createHmac } from 'node:crypto';
import { canonicalJson, sha256Hex } from './redact.js';
import type { AuditRecord } from '../contract/audit.js';
import type { IntentRecord, StoredRecord } from './files.js';

/**
 * The hash chain: each record's hash covers every other field of it, prevHash included, so an
 * edited record no longer matches its hash and a removed or reordered one breaks the next
 * record's prevHash. Anyone can check that (no key needed), which proves the files were not
 * changed naively.
 *
 * Someone who edits a record and recomputes every hash after it (and the head) is caught by the
 * keyed part: each record also carries `mac`, an HMAC-SHA256 of its hash under a key kept in the
 * SecretStore, never in the data folder. Without the key a record cannot be re-chained; with the
 * key missing (a terminal reading a folder whose key lives in the OS keychain), everything but the
 * MACs is still checked, and verify says the keyed check was not possible.
 */
export const GENESIS_HASH = '0'.repeat(64);

/** The SecretStore entry holding the chain's key (never in the data folder's own files). */
export const AUDIT_KEY_SECRET = 'audit:chain-key';
/**
 * The SecretStore entry holding the first seq written under the key. Kept beside the key, out of
 * reach of whoever can write the log: without it, stripping every MAC and re-chaining the records
 * would pass for a log that never had a key.
 */
export const AUDIT_KEYED_FROM_SECRET = 'audit:keyed-from';

/**
 * The SecretStore entry holding the newest seq the log had when the agent last started or closed.
 * The log only ever grows, so fewer records on disk than that means records were taken away, even
 * every month file and the head with them (which, alone, reads as a log that is still empty).
 */
export const AUDIT_KNOWN_SEQ_SECRET = 'audit:known-seq';

/** A stored seq (`keyed-from`, `known-seq`), if it is one. */
export function parseSeq(value: string | undefined): number | undefined {
  const n = value === undefined ? NaN : Number(value);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** The stored `keyed-from` seq, if it is one. */
export function parseKeyedFrom(value: string | undefined): number | undefined {
  const n = parseSeq(value);
  return n !== undefined && n >= 1 ? n : undefined;
}

export type UnhashedRecord = Omit<AuditRecord, 'hash' | 'mac'>;
export type Unhashed = UnhashedRecord | Omit<IntentRecord, 'hash' | 'mac'>;

export function recordHash(record: Unhashed | StoredRecord): string {
  return sha256Hex(canonicalRecord(record));
}

/**
 * The text a record's hash covers: `canonicalJson` of the record without `hash` and `mac`, written
 * field by field. A record's fields are strings and numbers, plus its params (JSON values, which
 * go through canonicalJson): this is what every call pays, and the generic walker costs several
 * times more on the record itself. Anything else falls back to the walker, so the text is the same.
 */
export function canonicalRecord(record: Unhashed | StoredRecord): string {
  const keys = Object.keys(record).sort();
  let out = '{';
  for (const key of keys) {
    if (key === 'hash' || key === 'mac') continue;
    const value = (record as unknown as Record<string, unknown>)[key];
    let text: string;
    switch (typeof value) {
      case 'string':
        text = JSON.stringify(value);
        break;
      case 'number':
        text = Number.isFinite(value) ? String(value + 0) : 'null';
        break;
      case 'undefined':
        continue;
      default:
        if (key !== 'params') {
          const { hash: _hash, mac: _mac, ...rest } = record as StoredRecord;
          return canonicalJson(rest);
        }
        text = canonicalJson(value);
    }
    out += `${out.length > 1 ? ',' : ''}${quoted(key)}:${text}`;
  }
  return `${out}}`;
}

/** Field names as JSON, kept for the few names records have (not for whatever a file holds). */
const QUOTED = new Map<string, string>();
function quoted(key: string): string {
  let q = QUOTED.get(key);
  if (q === undefined) {
    q = JSON.stringify(key);
    if (QUOTED.size < 64) QUOTED.set(key, q);
  }
  return q;
}

/** The record's keyed MAC: domain-separated from the head's, so neither can stand for the other. */
export function recordMac(key: string, hash: string): string {
  return macFor(key).mac(`advent-audit-record\u0000${hash}`);
}

/**
 * HMAC-SHA256 (RFC 2104) from two one-shot hashes over pads computed once per key: every record
 * pays for a MAC, and `createHmac` costs several times more (a keyed object per call). The same
 * bytes as `createHmac('sha256', key)`: the key is its UTF-8 bytes, hashed first if longer than a
 * block.
 */
class Hmac256 {
  private readonly inner: Buffer;
  private readonly outer: Buffer;

  constructor(key: string) {
    let k = Buffer.from(key, 'utf8');
    if (k.length > BLOCK) k = createHash('sha256').update(k).digest();
    this.inner = Buffer.alloc(BLOCK, 0x36);
    this.outer = Buffer.alloc(BLOCK + 32, 0x5c);
    for (let i = 0; i < k.length; i++) {
      this.inner[i] = (k[i] as number) ^ 0x36;
      this.outer[i] = (k[i] as number) ^ 0x5c;
    }
  }

  mac(message: string): string {
    const data = Buffer.allocUnsafe(BLOCK + Buffer.byteLength(message, 'utf8'));
    this.inner.copy(data, 0);
    data.write(message, BLOCK, 'utf8');
    sha256(data).copy(this.outer, BLOCK);
    return sha256(this.outer).toString('hex');
  }
}

const BLOCK = 64;
const oneShot = (crypto as { hash?: (algorithm: string, data: Buffer, out: 'buffer') => Buffer })
  .hash;
const sha256 = (data: Buffer): Buffer =>
  oneShot ? oneShot('sha256', data, 'buffer') : createHash('sha256').update(data).digest();

let lastMac: { key: string; hmac: Hmac256 } | undefined;

/** One log has one key: its pads are kept for the next record. */
function macFor(key: string): Hmac256 {
  if (lastMac?.key !== key) lastMac = { key, hmac: new Hmac256(key) };
  return lastMac.hmac;
}

export function headMac(key: string, seq: number, hash: string): string {
  return createHmac('sha256', key)
    .update(`advent-audit-head\u0000${seq}\u0000${hash}`)
    .digest('hex');
}
