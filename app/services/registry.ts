import { createHash } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import { RISKS } from '../contract/policy.js';
import { Emitter } from '../events.js';
import { describeParamError } from './param_errors.js';
import { SERVICE_NAME, type Service } from './service.js';
import { ANNOTATIONS, SCHEMA_MAPS } from './schema-keywords.js';

/**
 * The services the agent offers, their param validators and their enabled flags (DESIGN §3).
 * Definitions are checked when added, because the Advent server refuses a whole `register`
 * message over one bad schema: better a clear error at startup than a silent server refusal.
 */

export type ParamCheck = { ok: true } | { ok: false; message: string };

export interface ServiceEntry {
  service: Service;
  enabled: boolean;
}

/** What changed; every live connection re-registers on any of these. */
export type RegistryChange =
  | { name: string; kind: 'added' | 'enabled' | 'removed'; enabled: boolean }
  /** Several services added and removed at once (an MCP server re-listed its tools): one event. */
  | { kind: 'batch'; added: string[]; removed: string[] };

export type RegistryEvents = { changed: RegistryChange };

export interface RegistryOptions {
  /** Saved on/off flags by service name; services not listed are enabled. */
  enabled?: Record<string, boolean>;
}

/** Some model APIs behind voice servers cap function names at 64 characters. */
const MAX_NAME_LENGTH = 64;
const KNOWN_RISKS = new Set<string>(RISKS);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keywords whose value is a schema, or an array of schemas. */
const SUBSCHEMAS = new Set([
  'items',
  'additionalItems',
  'prefixItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'allOf',
  'anyOf',
  'oneOf',
]);
const REFS = new Set(['$ref', '$dynamicRef', '$recursiveRef']);

/** Not `push(...items)`: an `enum` of 100 000 values would pass too many arguments. */
function pushReversed<T>(stack: T[], items: readonly T[]): void {
  for (let i = items.length - 1; i >= 0; i -= 1) stack.push(items[i]!);
}

/** Where a value sits: a schema (keywords), a map of names to schemas, or data kept as it is. */
type Place = 'schema' | 'map' | 'data';

/**
 * The sha-256 of a schema's JSON, written without its annotations where they are keywords (every
 * other key, and everything under data keywords such as `enum`, `const` or unknown ones, is kept).
 * A `$ref` may point anywhere, even at a `default`, so a schema with one is hashed whole. The
 * walk keeps its own stack: schemas are bounded in depth by their callers, but a key must not be
 * what overflows the call stack.
 */
function validatorKey(schema: Record<string, unknown>): string {
  const walk = (strip: boolean): { key: string; refs: boolean } => {
    // Hashed at the end in one piece: an update per token costs more than the walk.
    const parts: string[] = [];
    let refs = false;
    const todo: ({ text: string } | { value: unknown; place: Place })[] = [
      { value: schema, place: 'schema' },
    ];
    for (let step = todo.pop(); step !== undefined; step = todo.pop()) {
      if ('text' in step) {
        parts.push(step.text);
        continue;
      }
      const { value, place } = step;
      if (Array.isArray(value)) {
        // An array in a schema's place is a list of schemas (`allOf`, `items` as a tuple).
        const next: typeof todo = [{ text: '[' }];
        value.forEach((v, i) => next.push({ text: i ? ',' : '' }, { value: v, place }));
        next.push({ text: ']' });
        pushReversed(todo, next);
        continue;
      }
      if (!isRecord(value)) {
        parts.push(JSON.stringify(value) ?? 'null');
        continue;
      }
      const next: typeof todo = [{ text: '{' }];
      let first = true;
      for (const [k, v] of Object.entries(value)) {
        if (v === undefined) continue;
        if (place === 'schema' && REFS.has(k)) refs = true;
        if (strip && place === 'schema' && ANNOTATIONS.has(k)) continue;
        const inner: Place =
          place === 'map'
            ? 'schema'
            : place === 'data'
              ? 'data'
              : SUBSCHEMAS.has(k)
                ? 'schema'
                : SCHEMA_MAPS.has(k)
                  ? 'map'
                  : 'data';
        next.push({ text: `${first ? '' : ','}${JSON.stringify(k)}:` }, { value: v, place: inner });
        first = false;
      }
      next.push({ text: '}' });
      pushReversed(todo, next);
    }
    return { key: createHash('sha256').update(parts.join('')).digest('hex'), refs };
  };
  const stripped = walk(true);
  return stripped.refs ? walk(false).key : stripped.key;
}

type Compiled = ValidateFunction | { problem: string };

/** A validator shared by the services whose schemas have the same key. */
interface Validator {
  /** The first of those schemas: what is compiled. */
  schema: Record<string, unknown>;
  /** Compiled, or why it cannot be; unset until first needed for an imported tool (add). */
  compiled?: Compiled;
  uses: number;
}

export class Registry {
  readonly events = new Emitter<RegistryEvents>();
  private readonly services = new Map<string, { service: Service; schemaKey: string }>();
  /**
   * Validators by their schema's key (validatorKey), shared by the services using them. An MCP
   * server re-listing its tools re-adds them all, mostly with the schemas they had, often with
   * new descriptions: compiling a large schema takes up to seconds, with the event loop stopped.
   */
  private readonly validators = new Map<string, Validator>();
  /** Inside batch(): validators no service uses now, dropped at the end unless used again. */
  private released: string[] = [];
  private readonly enabled = new Map<string, boolean>();
  /** Inside batch(): what changed so far, told in one event at the end. */
  private pending: { added: string[]; removed: string[] } | undefined;
  // No coercion, no defaults, no removal: validation must never change what the server sent,
  // so the audit log and the service see the same params. strict off: `description` and other
  // annotations are allowed anywhere.
  private readonly ajv = new Ajv({
    strict: false,
    allErrors: false,
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
    validateFormats: false,
  });

  constructor(options: RegistryOptions = {}) {
    for (const [name, on] of Object.entries(options.enabled ?? {})) {
      if (typeof on === 'boolean') this.enabled.set(name, on);
    }
  }

  /**
   * Make several changes and tell listeners once (every live connection re-registers once per
   * event, so a server re-listing twenty tools must not cause twenty re-registrations). Nested
   * batches join the outer one.
   */
  batch(changes: () => void): void {
    if (this.pending) return changes();
    const pending = { added: [] as string[], removed: [] as string[] };
    this.pending = pending;
    try {
      changes();
    } finally {
      this.pending = undefined;
      this.dropReleased();
      if (pending.added.length || pending.removed.length)
        this.events.emit('changed', { kind: 'batch', ...pending });
    }
  }

  /** Removes a service (its enabled flag is kept for when it comes back). */
  remove(name: string): boolean {
    const entry = this.services.get(name);
    if (!entry) return false;
    this.services.delete(name);
    this.release(entry.schemaKey);
    if (this.pending) this.pending.removed.push(name);
    else this.events.emit('changed', { name, kind: 'removed', enabled: false });
    return true;
  }

  /** Adds a service; throws an Error naming what is wrong with the definition. */
  add(service: Service): void {
    const name: unknown = service.name;
    if (typeof name !== 'string' || !SERVICE_NAME.test(name) || name.length > MAX_NAME_LENGTH) {
      throw new Error(
        `service name ${JSON.stringify(name)} is invalid: use lowercase letters, digits and '_', starting with a letter, at most ${MAX_NAME_LENGTH} characters`,
      );
    }
    if (this.services.has(name)) throw new Error(`service '${name}' is already registered`);
    if (typeof service.description !== 'string' || service.description.trim() === '') {
      throw new Error(
        `service '${name}' needs a description: the model reads it to decide when to call`,
      );
    }
    if (!KNOWN_RISKS.has(service.risk)) {
      throw new Error(`service '${name}' has an unknown risk ${JSON.stringify(service.risk)}`);
    }
    if (!Number.isFinite(service.timeoutMs) || service.timeoutMs <= 0) {
      throw new Error(`service '${name}' needs a positive timeoutMs`);
    }
    const schema: unknown = service.parameters;
    if (!isRecord(schema) || schema.type !== 'object') {
      throw new Error(`service '${name}': parameters must be a JSON Schema with type "object"`);
    }
    if (service.serverParameters !== undefined && !isRecord(service.serverParameters)) {
      throw new Error(`service '${name}': serverParameters must be a JSON Schema object`);
    }
    this.checkSchema(name, schema);
    const schemaKey = validatorKey(schema);
    const known = this.validators.get(schemaKey);
    // Imported tools compile on their first call: a server may list megabytes of schemas and
    // re-list them every few seconds, most never called. Built-in services compile now, so a
    // schema the validator cannot compile stops the agent at startup (their tests add them all)
    // rather than failing their calls later.
    const compiled =
      known?.compiled ?? (service.server === undefined ? this.compile(schema) : undefined);
    if (compiled && 'problem' in compiled)
      throw new Error(`service '${name}': ${compiled.problem}`);
    if (known) {
      known.uses += 1;
      known.compiled = compiled;
    } else this.validators.set(schemaKey, { schema, compiled, uses: 1 });
    this.services.set(name, { service, schemaKey });
    if (this.pending) this.pending.added.push(name);
    else this.events.emit('changed', { name, kind: 'added', enabled: this.isEnabled(name) });
  }

  /**
   * Check a parameters schema against the JSON Schema meta-schema (cheap: milliseconds for the
   * largest schema an imported tool may bring); throws naming what is wrong.
   */
  private checkSchema(name: string, schema: Record<string, unknown>): void {
    let valid: boolean;
    try {
      valid = this.ajv.validateSchema(schema) as boolean;
    } catch (err) {
      // e.g. a `$schema` naming a draft this validator does not know.
      throw new Error(`service '${name}': parameters cannot be checked: ${(err as Error).message}`);
    }
    if (!valid) {
      throw new Error(
        `service '${name}': parameters are not a valid JSON Schema: ${this.ajv.errorsText(this.ajv.errors, { dataVar: 'parameters' })}`,
      );
    }
    // An async validator answers with a promise, which reads as "valid" whatever the params,
    // and its refusal would be a rejection nobody handles.
    if (schema.$async === true) {
      throw new Error(`service '${name}': parameters schema must not be $async`);
    }
  }

  /** Compile a checked schema; what is wrong is kept as a problem, not thrown. */
  private compile(schema: Record<string, unknown>): Compiled {
    try {
      const validate = this.ajv.compile(schema);
      if (!('$async' in validate && validate.$async)) return validate;
      this.ajv.removeSchema(schema);
      return { problem: 'parameters schema must not be $async' };
    } catch (err) {
      return { problem: `parameters schema does not compile: ${(err as Error).message}` };
    }
  }

  /**
   * A service stopped using a validator. Unused, it leaves Ajv at once (Ajv keeps every schema it
   * compiled, and a changed schema with the same `$id` could not be added while the old one is
   * there); it stays here until the batch ends, for a service re-added with the same schema.
   */
  private release(schemaKey: string): void {
    const entry = this.validators.get(schemaKey);
    if (!entry || --entry.uses > 0) return;
    if (typeof entry.compiled === 'function') this.ajv.removeSchema(entry.schema);
    if (this.pending) this.released.push(schemaKey);
    else this.validators.delete(schemaKey);
  }

  private dropReleased(): void {
    for (const key of this.released)
      if (this.validators.get(key)?.uses === 0) this.validators.delete(key);
    this.released = [];
  }

  get(name: string): Service | undefined {
    return this.services.get(name)?.service;
  }

  /** All services in registration order, enabled or not. */
  list(): ServiceEntry[] {
    return [...this.services.values()].map(({ service }) => ({
      service,
      enabled: this.isEnabled(service.name),
    }));
  }

  /** Unknown services are not enabled. */
  isEnabled(name: string): boolean {
    return this.services.has(name) && this.enabled.get(name) !== false;
  }

  /** Returns whether anything changed; emits 'changed' only then. Throws for an unknown service. */
  setEnabled(name: string, on: boolean): boolean {
    if (!this.services.has(name)) throw new Error(`unknown service '${name}'`);
    if (this.isEnabled(name) === on) return false;
    this.enabled.set(name, on);
    this.events.emit('changed', { name, kind: 'enabled', enabled: on });
    return true;
  }

  /** What a server may see and call: enabled and not user-only. */
  serverServices(): Service[] {
    return this.list()
      .filter((e) => e.enabled && e.service.userOnly !== true)
      .map((e) => e.service);
  }

  /** Checks params against the service's schema without changing them. */
  validate(name: string, params: unknown): ParamCheck {
    const entry = this.services.get(name);
    if (!entry) return { ok: false, message: `unknown service '${name}'` };
    if (typeof params !== 'object' || params === null || Array.isArray(params)) {
      return { ok: false, message: 'params must be an object' };
    }
    const validator = this.validators.get(entry.schemaKey)!;
    const validate = (validator.compiled ??= this.compile(validator.schema));
    // Kept, not retried: compiling again on every call would cost as much each time.
    if (typeof validate !== 'function') return { ok: false, message: validate.problem };
    if (validate(params)) return { ok: true };
    return { ok: false, message: describeParamError(validate.errors, params) };
  }
}
