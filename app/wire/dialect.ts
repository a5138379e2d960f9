/**
 * A connection kind as the core sees it (DESIGN §2): one descriptor per dialect folder
 * (`app/wire/<kind>/index.ts`), pairing the contract's profile spec with what only the core can
 * do — complete a profile (device identities, a secret pasted into an address) and start a
 * session. `DialectSet` is the set an agent was started with: it validates profiles by kind and
 * is the only place that picks a dialect for a kind.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import type { Clock } from '../clock.js';
import {
  type ProfileKindSpec,
  type ProfileKindView,
  kindView,
} from '../contract/profiles/index.js';
import type { IdSource } from '../ids.js';
import type { Timing } from './advent/link.js';
import type { WsTiming } from './kit/ws-dialer.js';
import type { Gate, LiveSession, ToolEntry } from './session.js';

/** What every profile has, whatever its kind. */
export interface BaseProfile {
  id: string;
  kind: string;
  name: string;
  autoConnect?: boolean;
}

/** Where a profile's secret comes from: the SecretStore, or a terminal flag for this run. */
export type SecretSource = () => Promise<string | undefined> | string | undefined;

/** What a session is given by the agent, whatever its kind. */
export interface SessionContext {
  gate: Gate;
  tools: () => readonly ToolEntry[];
  secret: SecretSource;
  clock: Clock;
  ids: IdSource;
  timing?: Partial<Timing>;
  wsTiming?: Partial<WsTiming>;
  version: string;
}

/**
 * One connection kind. Its methods take the kind's own profile type; a list of dialects holds them
 * as `Dialect` (method parameters are checked bivariantly, so each keeps its precise type).
 */
export interface Dialect<P extends BaseProfile = BaseProfile> {
  readonly profile: ProfileKindSpec & { readonly schema: TSchema; readonly inputSchema: TSchema };
  /**
   * The profile to save from what the user (or a flag) gave: identities left empty are taken from
   * `previous` or generated once, so the server sees the same device on every run; a secret the
   * user pasted into a field (an endpoint's `?token=`) is split off to go to the SecretStore.
   * Throws an Error whose message is for people when a value cannot be used.
   */
  complete(input: P, previous: P | undefined, ids: IdSource): { profile: P; secret?: string };
  createSession(profile: P, ctx: SessionContext): LiveSession;
}

export type ProfileCheck<T> = { ok: true; value: T } | { ok: false; message: string };

export class DialectSet {
  private readonly byKind = new Map<string, Dialect>();
  private readonly validators = new Map<
    string,
    { saved: ValidateFunction; input: ValidateFunction }
  >();
  private readonly ajv = new Ajv({ strict: false, allErrors: false, coerceTypes: false });

  constructor(readonly list: readonly Dialect[]) {
    for (const d of list) {
      if (this.byKind.has(d.profile.kind))
        throw new Error(`two dialects claim the connection kind '${d.profile.kind}'`);
      this.byKind.set(d.profile.kind, d);
    }
  }

  get(kind: string): Dialect | undefined {
    return this.byKind.get(kind);
  }

  /** The kinds as the UI receives them in the snapshot. */
  views(): ProfileKindView[] {
    return this.list.map((d) => kindView(d.profile));
  }

  /** A profile as saved in settings: valid for its kind. */
  checkSaved(value: unknown): ProfileCheck<BaseProfile> {
    return this.check(value, 'saved');
  }

  /** A profile as the UI or a flag gives it (id optional). */
  checkInput(value: unknown): ProfileCheck<Omit<BaseProfile, 'id'> & { id?: string }> {
    return this.check(value, 'input');
  }

  private check(value: unknown, which: 'saved' | 'input'): ProfileCheck<BaseProfile> {
    const kind = (value as { kind?: unknown } | null)?.kind;
    const dialect = typeof kind === 'string' ? this.byKind.get(kind) : undefined;
    if (!dialect)
      return {
        ok: false,
        message: `there is no connection kind ${JSON.stringify(kind)}; the kinds are ${[...this.byKind.keys()].join(', ')}`,
      };
    let v = this.validators.get(dialect.profile.kind);
    if (!v) {
      v = {
        saved: this.ajv.compile(dialect.profile.schema),
        input: this.ajv.compile(dialect.profile.inputSchema),
      };
      this.validators.set(dialect.profile.kind, v);
    }
    const validate = v[which];
    if (validate(value)) return { ok: true, value: value as BaseProfile };
    const err = validate.errors?.[0];
    const field =
      err?.instancePath.replace(/^\//, '') ||
      (err?.params as { additionalProperty?: string })?.additionalProperty;
    return {
      ok: false,
      message: `the ${dialect.profile.title.en} profile is not valid${field ? ` (${field})` : ''}: ${err?.message ?? 'rejected'}`,
    };
  }
}
