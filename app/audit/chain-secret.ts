/**
 * The audit chain's secret (chain.ts): its key, the first seq written under it (`keyedFrom`), the
 * newest seq the log is known to have held (`knownSeq`), and the ranges of records no key vouches
 * for (`unchecked`). All in ONE SecretStore value: kept as separate entries, each could be removed
 * on its own by whoever can write the data folder (and a safeStorage ciphertext moved from one
 * entry to another), and a log stripped of its MACs then passed for one that never had a key.
 *
 * The old separate entries (the key, `keyed-from`, `known-seq`) are still written, as copies for
 * readers that look for them there (the terminal's `audit --verify`); the agent reads them only
 * when the one value is missing, and verify then asks no less of the log (a `keyed-from` moved
 * higher reports more records as unchecked, never fewer).
 *
 * Never treated as a fresh start when the log already has records: a key made then cannot vouch
 * for what was written before it, and verify says so (`keyedFrom` > 1). A value that is stored but
 * cannot be read now (a locked keyring) is never replaced: the log is written without MACs until
 * it can be read again, the user is told, and verify names those records.
 */
import { randomBytes } from 'node:crypto';
import type { AgentNotice } from '../contract/notice.js';
import type { SecretStore } from '../settings/secrets.js';
import {
  AUDIT_KEYED_FROM_SECRET,
  AUDIT_KEY_SECRET,
  AUDIT_KNOWN_SEQ_SECRET,
  parseKeyedFrom,
  parseSeq,
} from './chain.js';
import type { AuditLog, AuditLogOptions } from './log.js';

/** The SecretStore entry holding the whole chain secret (JSON, see `ChainState`). */
export const AUDIT_CHAIN_SECRET = 'audit:chain';
/** Unchecked ranges kept at most; past that the oldest two are merged (more is reported, not less). */
export const MAX_UNCHECKED_RANGES = 16;

export interface SeqRange {
  from: number;
  to: number;
}

interface ChainState {
  key: string;
  keyedFrom?: number;
  knownSeq?: number;
  unchecked: SeqRange[];
}

/**
 * `ready`: read (or migrated from the old separate entries); `made`: none was stored, a new key
 * was saved; `unavailable`: one is stored but cannot be read now; `unsaved`: none is stored and a
 * new one could not be saved.
 */
export type ChainStatus = 'ready' | 'made' | 'unavailable' | 'unsaved';

const HEX64 = /^[0-9a-f]{64}$/;

type Read = { kind: 'absent' } | { kind: 'value'; value: string } | { kind: 'unreadable' };

/** A stored value, telling "none" from "stored but out of reach now" where the store can. */
async function readSecret(secrets: SecretStore, name: string): Promise<Read> {
  try {
    const value = await secrets.get(name);
    if (value !== undefined) return { kind: 'value', value };
    if (secrets.has && (await secrets.has(name))) return { kind: 'unreadable' };
    return { kind: 'absent' };
  } catch {
    return { kind: 'unreadable' };
  }
}

function isRange(v: unknown): v is SeqRange {
  if (typeof v !== 'object' || v === null) return false;
  const { from, to } = v as Record<string, unknown>;
  return (
    typeof from === 'number' &&
    typeof to === 'number' &&
    Number.isSafeInteger(from) &&
    Number.isSafeInteger(to) &&
    from >= 1 &&
    to >= from
  );
}

function parseState(text: string): ChainState | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  if (r.v !== 1 || typeof r.key !== 'string' || !HEX64.test(r.key)) return undefined;
  const keyedFrom = parseKeyedFrom(r.keyedFrom === undefined ? undefined : String(r.keyedFrom));
  const knownSeq = parseSeq(r.knownSeq === undefined ? undefined : String(r.knownSeq));
  const unchecked = Array.isArray(r.unchecked)
    ? r.unchecked.slice(0, MAX_UNCHECKED_RANGES).filter(isRange)
    : [];
  return {
    key: r.key,
    ...(keyedFrom !== undefined && { keyedFrom }),
    ...(knownSeq !== undefined && { knownSeq }),
    unchecked: unchecked.map(({ from, to }) => ({ from, to })),
  };
}

function formatState(state: ChainState): string {
  return JSON.stringify({ v: 1, ...state });
}

/** Adds `range`, keeping at most MAX_UNCHECKED_RANGES by merging the oldest. */
function addRange(ranges: SeqRange[], range: SeqRange): SeqRange[] {
  const out = [...ranges, range].sort((a, b) => a.from - b.from);
  while (out.length > MAX_UNCHECKED_RANGES) {
    const [a, b] = out.splice(0, 2) as [SeqRange, SeqRange];
    out.unshift({ from: a.from, to: Math.max(a.to, b.to) });
  }
  return out;
}

export class AuditChainSecret {
  /** Set when the old separate entries were read: removed once the one value is saved. */
  private migrated = false;
  /** The stored value could be read but is not a chain secret (damaged, or another's moved in). */
  private damaged = false;
  private saving: Promise<unknown> = Promise.resolve();
  /** The old entries' copies as last written (chain-secret's doc says why they are kept). */
  private readonly copied = new Map<string, string>();

  private constructor(
    private readonly secrets: SecretStore,
    readonly status: ChainStatus,
    private state: ChainState | undefined,
  ) {}

  /** Reads the chain secret; makes and saves a key only when none is stored at all. */
  static async load(secrets: SecretStore): Promise<AuditChainSecret> {
    const stored = await readSecret(secrets, AUDIT_CHAIN_SECRET);
    if (stored.kind === 'unreadable')
      return new AuditChainSecret(secrets, 'unavailable', undefined);
    if (stored.kind === 'value') {
      const state = parseState(stored.value);
      if (state) return new AuditChainSecret(secrets, 'ready', state);
    }
    // Stored by an older version as separate entries: read them once, keep them as one value.
    const legacy = stored.kind === 'absent' ? await readSecret(secrets, AUDIT_KEY_SECRET) : stored;
    if (legacy.kind === 'unreadable')
      return new AuditChainSecret(secrets, 'unavailable', undefined);
    if (stored.kind === 'absent' && legacy.kind === 'value' && HEX64.test(legacy.value)) {
      const quiet = (name: string): Promise<string | undefined> =>
        secrets.get(name).catch(() => undefined);
      const keyedFrom = parseKeyedFrom(await quiet(AUDIT_KEYED_FROM_SECRET));
      const knownSeq = parseSeq(await quiet(AUDIT_KNOWN_SEQ_SECRET));
      const made = new AuditChainSecret(secrets, 'ready', {
        key: legacy.value,
        ...(keyedFrom !== undefined && { keyedFrom }),
        ...(knownSeq !== undefined && { knownSeq }),
        unchecked: [],
      });
      made.migrated = true;
      return made;
    }
    // None stored (or a value that is no chain secret): a new key, from the system's CSPRNG
    // (never the injectable id source, which tests seed). Saved before the log uses it.
    const state: ChainState = { key: randomBytes(32).toString('hex'), unchecked: [] };
    try {
      await secrets.set(AUDIT_CHAIN_SECRET, formatState(state));
    } catch {
      return new AuditChainSecret(secrets, 'unsaved', undefined);
    }
    const made = new AuditChainSecret(secrets, 'made', state);
    made.damaged = stored.kind === 'value';
    return made;
  }

  /** What AuditLog.open needs from the secret. */
  logOptions(): Pick<
    AuditLogOptions,
    'key' | 'keyedFrom' | 'knownSeq' | 'unchecked' | 'keyUnavailable' | 'keyIsNew'
  > {
    const state = this.state;
    if (!state) return { keyUnavailable: true };
    return {
      key: state.key,
      ...(this.status === 'made' && { keyIsNew: true }),
      ...(state.keyedFrom !== undefined && { keyedFrom: state.keyedFrom }),
      ...(state.knownSeq !== undefined && { knownSeq: state.knownSeq }),
      unchecked: state.unchecked,
    };
  }

  /**
   * Completes the secret from the log just opened (where the MACs begin; records found without
   * the MACs they should carry), saves it, and returns what the user must be told.
   */
  async settle(log: AuditLog): Promise<AgentNotice[]> {
    const notices: AgentNotice[] = [];
    const damage = log.headDamagedAt;
    if (damage !== undefined)
      notices.push({
        message: `One of the audit log's two head copies was damaged (a write cut short when the agent stopped, or the file changed by someone): whether calls recorded after #${damage} were removed cannot be checked.`,
        words: { key: 'notice.auditHeadDamaged', params: { seq: damage } },
      });
    const state = this.state;
    if (!state) {
      notices.push({
        message:
          this.status === 'unavailable'
            ? "The audit log's key cannot be read now (the system keyring may be locked, or its encryption is unavailable). Calls are still recorded, but the ones recorded until the key can be read again cannot be checked for tampering. Unlock the keyring and restart the agent."
            : "The audit log's key could not be saved (the system's encryption service may be unavailable). Calls are still recorded, but they cannot be checked for tampering.",
        words: {
          key:
            this.status === 'unavailable' ? 'notice.auditKeyUnavailable' : 'notice.auditKeyUnsaved',
          params: {},
        },
      });
      return notices;
    }
    let changed = this.migrated || this.status === 'made';
    if (state.keyedFrom === undefined && log.keyedFrom !== undefined) {
      state.keyedFrom = log.keyedFrom;
      changed = true;
    }
    const before = (state.keyedFrom ?? 1) - 1;
    if ((this.status === 'made' || this.migrated) && before > 0 && log.lastSeq > 0)
      notices.push({
        message: `The audit log's key was missing${this.damaged ? ' (its stored value is damaged)' : ''} although the log holds records: records 1–${before} were written without it (by an older version, or the key was removed) and cannot be checked for tampering.`,
        words: { key: 'notice.auditKeyMissing', params: { last: before } },
      });
    const tail = log.uncheckedAtOpen;
    if (tail) {
      log.markUnchecked(tail);
      state.unchecked = addRange(state.unchecked, tail);
      changed = true;
      notices.push({
        message: `Audit records ${tail.from}–${tail.to} carry no keyed MAC (recorded while the log's key could not be read, or their MACs were removed by someone): they cannot be checked for tampering.`,
        words: { key: 'notice.auditUnchecked', params: { from: tail.from, to: tail.to } },
      });
    }
    if (changed) await this.save();
    this.migrated = false;
    return notices;
  }

  /** Raises the known seq (never lowers it: a log found shorter must stay found out). */
  async noteSeq(seq: number): Promise<void> {
    const state = this.state;
    if (!state || (state.knownSeq !== undefined && seq <= state.knownSeq)) return;
    state.knownSeq = seq;
    await this.save();
  }

  /**
   * Saves the whole value, then the old entries' copies that changed; a failure is kept quiet
   * (the next save carries the same state).
   */
  private save(): Promise<void> {
    const state = this.state;
    if (!state) return Promise.resolve();
    const run = this.saving.then(async () => {
      await this.secrets.set(AUDIT_CHAIN_SECRET, formatState(state)).catch(() => undefined);
      const copies: [string, string | undefined][] = [
        [AUDIT_KEY_SECRET, state.key],
        [AUDIT_KEYED_FROM_SECRET, state.keyedFrom?.toString()],
        [AUDIT_KNOWN_SEQ_SECRET, state.knownSeq?.toString()],
      ];
      for (const [name, value] of copies) {
        if (value === undefined || this.copied.get(name) === value) continue;
        await this.secrets.set(name, value).then(
          () => void this.copied.set(name, value),
          () => undefined,
        );
      }
    });
    this.saving = run;
    return run;
  }

  /**
   * What a reader of the folder (never writing it) needs to verify: the stored value, else the old
   * separate entries. Makes no key; empty when none can be read.
   */
  static async peek(
    secrets: SecretStore,
  ): Promise<Pick<AuditLogOptions, 'key' | 'keyedFrom' | 'knownSeq' | 'unchecked'>> {
    const stored = await readSecret(secrets, AUDIT_CHAIN_SECRET);
    const state = stored.kind === 'value' ? parseState(stored.value) : undefined;
    if (state) return new AuditChainSecret(secrets, 'ready', state).logOptions();
    const quiet = (name: string): Promise<string | undefined> =>
      secrets.get(name).catch(() => undefined);
    const key = await quiet(AUDIT_KEY_SECRET);
    const keyedFrom = parseKeyedFrom(await quiet(AUDIT_KEYED_FROM_SECRET));
    const knownSeq = parseSeq(await quiet(AUDIT_KNOWN_SEQ_SECRET));
    return {
      ...(key !== undefined && HEX64.test(key) && { key }),
      ...(key !== undefined && keyedFrom !== undefined && { keyedFrom }),
      ...(knownSeq !== undefined && { knownSeq }),
    };
  }
}
