import type { AuditRecord } from '../contract/audit.js';
import { canonicalJson, sha256Hex } from './redact.js';

/**
 * The hash chain: each record's hash covers every other field of it, prevHash included, so an
 * edited record no longer matches its hash and a removed or reordered one breaks the next
 * record's prevHash. (It proves the files were not changed naively; someone who rewrites every
 * hash after an edit is only caught against a head remembered elsewhere, see verify.ts.)
 */
export const GENESIS_HASH = '0'.repeat(64);

export type UnhashedRecord = Omit<AuditRecord, 'hash'>;

export function recordHash(record: UnhashedRecord | AuditRecord): string {
  const { hash: _hash, ...rest } = record as AuditRecord;
  return sha256Hex(canonicalJson(rest));
}
