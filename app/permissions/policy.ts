import { POLICIES, type Policy, type PromptAnswer, type Risk } from '../contract/policy.js';
import type { Settings } from '../settings/schema.js';

/** What the gate does with one call before it runs (DESIGN §3 Policy). */
export type Decision =
  | { kind: 'deny' }
  | { kind: 'auto' }
  | { kind: 'granted'; scope: 'session' | 'always' }
  | { kind: 'ask' };

export interface DecideInput {
  service: string;
  risk: Risk;
  /** The service name, or `name:action` for an escalation such as `create_file:overwrite`. Defaults to the service. */
  grantKey?: string;
  /**
   * An action beyond what the policy was chosen for (overwrite instead of create). A grantKey of
   * the `name:action` form is always treated as one, whatever this says: failing closed.
   */
  escalation?: boolean;
}

/** Where policies and "always" grants are kept; settings back it in the app, plain objects in tests. */
export interface PolicyPersistence {
  getPolicies(): Readonly<Record<string, Policy | undefined>>;
  alwaysGrants(): readonly string[];
  /** Replace the whole list of always-grants. */
  persistAlways(keys: string[]): Promise<void>;
}

export function defaultPolicy(risk: Risk): Policy {
  return risk === 'read' ? 'allow' : 'ask';
}

/** `create_file:overwrite` → `create_file`; a stored `files_read@<identity>` → `files_read`. */
export function serviceOfGrantKey(grantKey: string): string {
  const key = withoutIdentity(grantKey);
  const colon = key.indexOf(':');
  return colon === -1 ? key : key.slice(0, colon);
}

/** A grant key as stored for a service with an identity: `key@identity`. */
function withIdentity(grantKey: string, identity: string | undefined): string {
  return identity === undefined ? grantKey : `${grantKey}@${identity}`;
}

function withoutIdentity(stored: string): string {
  const at = stored.indexOf('@');
  return at === -1 ? stored : stored.slice(0, at);
}

function identityOfStored(stored: string): string | undefined {
  const at = stored.indexOf('@');
  return at === -1 ? undefined : stored.slice(at + 1);
}

export interface PolicyStoreOptions {
  /**
   * Who stands behind a service, when that can change under the same name (an imported MCP
   * server's name + command or URL). Its grants are stored under `key@identity`, so a renamed or
   * changed server does not inherit them.
   */
  identity?: (service: string) => string | undefined;
}

/** Whether `grantKey` belongs to `service`: the service itself or one of its `service:action` escalations. */
export function grantKeyBelongsTo(grantKey: string, service: string): boolean {
  return serviceOfGrantKey(grantKey) === service;
}

/**
 * Per-service policy plus remembered grants. Session grants live only in memory for this run;
 * always-grants live in the persistence (settings), which stays the one source of truth for them.
 */
export class PolicyStore {
  readonly #persistence: PolicyPersistence;
  readonly #session = new Set<string>();
  // Persisting reads the current list and writes a new one: serialize, or two "always" answers race.
  #queue: Promise<unknown> = Promise.resolve();

  readonly #identity: (service: string) => string | undefined;

  constructor(persistence: PolicyPersistence, options: PolicyStoreOptions = {}) {
    this.#persistence = persistence;
    this.#identity = options.identity ?? (() => undefined);
  }

  /** How `grantKey` is stored now: with its service's current identity, if it has one. */
  #stored(grantKey: string): string {
    return withIdentity(grantKey, this.#identity(serviceOfGrantKey(grantKey)));
  }

  /** A stored key that holds for its service as it is now (same identity), unqualified. */
  #current(stored: string): string | undefined {
    const key = withoutIdentity(stored);
    return identityOfStored(stored) === this.#identity(serviceOfGrantKey(key)) ? key : undefined;
  }

  effectivePolicy(service: string, risk: Risk): Policy {
    const policies = this.#persistence.getPolicies();
    // Own properties only: a service may well be called "constructor" or "toString".
    if (!Object.hasOwn(policies, service)) return defaultPolicy(risk);
    const policy = policies[service];
    if (policy === undefined) return defaultPolicy(risk);
    // Something that is not a policy at all is a bug somewhere; asking is the safe reading of it.
    return (POLICIES as readonly unknown[]).includes(policy) ? policy : 'ask';
  }

  decide({ service, risk, grantKey = service, escalation = false }: DecideInput): Decision {
    if (!grantKeyBelongsTo(grantKey, service)) {
      throw new TypeError(`Grant key "${grantKey}" does not belong to service "${service}".`);
    }
    const policy = this.effectivePolicy(service, risk);
    // Deny wins over everything, remembered grants included: the user's latest word is the policy.
    if (policy === 'deny') return { kind: 'deny' };
    const isEscalation = escalation || grantKey !== service;
    // "Allow" was chosen for the plain action; an escalation always needs its own yes.
    if (policy === 'allow' && !isEscalation) return { kind: 'auto' };
    const scope = this.grantScope(grantKey);
    return scope ? { kind: 'granted', scope } : { kind: 'ask' };
  }

  /** The remembered grant for exactly this key, preferring the stronger one. */
  grantScope(grantKey: string): 'session' | 'always' | undefined {
    const stored = this.#stored(grantKey);
    if (this.#persistence.alwaysGrants().includes(stored)) return 'always';
    if (this.#session.has(stored)) return 'session';
    return undefined;
  }

  /**
   * Remember a prompt answer. 'once' and 'deny' remember nothing. An 'always' also holds for the
   * rest of this session even if persisting it fails (the user did say yes; the rejection tells
   * the caller the choice will not survive a restart).
   */
  remember(grantKey: string, scope: PromptAnswer): Promise<void> {
    if (scope === 'once' || scope === 'deny') return Promise.resolve();
    const stored = this.#stored(grantKey);
    this.#session.add(stored);
    if (scope === 'session') return Promise.resolve();
    return this.#persist((keys) => (keys.includes(stored) ? undefined : [...keys, stored]));
  }

  /** Forget every grant of a service, its escalations (`name:*`) included, in both scopes. */
  revoke(service: string): Promise<void> {
    for (const key of [...this.#session]) {
      if (grantKeyBelongsTo(key, service)) this.#session.delete(key);
    }
    return this.#persist((keys) => {
      const kept = keys.filter((key) => !grantKeyBelongsTo(key, service));
      return kept.length === keys.length ? undefined : kept;
    });
  }

  /** The "always" grants that hold for the service as it is now (a changed server's do not). */
  alwaysGrantsOf(service: string): string[] {
    return this.#persistence
      .alwaysGrants()
      .filter((key) => grantKeyBelongsTo(key, service))
      .flatMap((key) => this.#current(key) ?? []);
  }

  sessionGrantsOf(service: string): string[] {
    return [...this.#session]
      .filter((key) => grantKeyBelongsTo(key, service))
      .flatMap((key) => this.#current(key) ?? []);
  }

  /** `edit` returns the new list, or undefined when nothing changes (then nothing is written). */
  #persist(edit: (keys: readonly string[]) => string[] | undefined): Promise<void> {
    const run = async (): Promise<void> => {
      const next = edit(this.#persistence.alwaysGrants());
      if (next) await this.#persistence.persistAlways(next);
    };
    const result = this.#queue.then(run);
    this.#queue = result.catch(() => undefined);
    return result;
  }
}

/** The part of SettingsStore that policies need: structural, so this module stays testable alone. */
export interface SettingsAccess {
  get(): Settings;
  update(mutator: (draft: Settings) => void): Promise<unknown>;
}

/** Back a PolicyStore with the settings file (`services.<name>.policy` and `alwaysGrants`). */
export function settingsPolicyPersistence(settings: SettingsAccess): PolicyPersistence {
  return {
    // fromEntries defines own properties, so even a key like "__proto__" cannot touch a prototype.
    getPolicies: () =>
      Object.fromEntries(
        Object.entries(settings.get().services).map(([name, service]) => [name, service.policy]),
      ),
    alwaysGrants: () => settings.get().alwaysGrants,
    persistAlways: async (keys) => {
      await settings.update((draft) => {
        draft.alwaysGrants = [...new Set(keys)];
      });
    },
  };
}
