import { createHmac } from 'node:crypto';
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

export type UnhashedRecord = Omit<AuditRecord, 'hash' | 'mac'>;
export type Unhashed = UnhashedRecord | Omit<IntentRecord, 'hash' | 'mac'>;

export function recordHash(record: Unhashed | StoredRecord): string {
  const { hash: _hash, mac: _mac, ...rest } = record as StoredRecord;
  return sha256Hex(canonicalJson(rest));
}

/** The record's keyed MAC: domain-separated from the head's, so neither can stand for the other. */
export function recordMac(key: string, hash: string): string {
  return createHmac('sha256', key).update(`advent-audit-record\u0000${hash}`).digest('hex');
}

export function headMac(key: string, seq: number, hash: string): string {
  return createHmac('sha256', key)
    .update(`advent-audit-head\u0000${seq}\u0000${hash}`)
    .digest('hex');
}
