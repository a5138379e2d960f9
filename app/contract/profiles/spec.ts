/**
 * What a connection kind is, as data (DESIGN §2): its profile fields (TypeBox schemas, so the
 * types and the validators come from one source), what it can carry, whether it needs a secret,
 * and the metadata the connection form and the terminal flags are generated from. Each kind has
 * one file beside this one; the form, the flags and the Connections page iterate the list in
 * `index.ts` instead of switching on kinds. The spec travels to the UI in the snapshot (plain
 * JSON), so its words for people carry both languages with it.
 */
import {
  type TBoolean,
  type TLiteral,
  type TObject,
  type TOptional,
  type TSchema,
  Type,
} from '@sinclair/typebox';
import { type ConnectionCapabilities, LOCAL_CONNECTION } from '../connection.js';
import { MCP_CLIENTS_OFFER, MCP_CLIENT_PREFIX } from '../offer.js';

/** The languages the UI speaks. */
export const LANGUAGES = ['en', 'zh-CN'] as const;
export type Language = (typeof LANGUAGES)[number];

/** Words for people, in every language the UI speaks. */
export type Texts = { readonly [L in Language]: string };

/** Where a field appears in the connection form (sections render in this order). */
export const FORM_SECTIONS = ['basics', 'login', 'device', 'audio', 'behaviour'] as const;
export type FormSection = (typeof FORM_SECTIONS)[number];

export interface FieldSpec {
  /** The profile property it edits. */
  readonly key: string;
  readonly input: 'text' | 'number' | 'choice' | 'check';
  readonly section: FormSection;
  readonly label: Texts;
  /** A string is the same in every language (an example address). */
  readonly placeholder?: Texts | string;
  readonly help?: Texts;
  /** Shown when the value does not match the field's schema. */
  readonly invalid?: Texts;
  readonly required?: boolean;
  /** For `choice`: the values and their labels (the empty "not set" choice is added unless required). */
  readonly choices?: readonly { readonly value: string | number; readonly label: Texts | string }[];
  /** The label of the empty choice (default: "Server default"). */
  readonly emptyChoice?: Texts;
  /** Left empty, the core generates one once and keeps it (a device identity). */
  readonly generated?: boolean;
  /** A checkbox's value when the profile has none. */
  readonly defaultValue?: boolean;
  /** Takes a whole form row (long addresses). */
  readonly wide?: boolean;
  /** The terminal flag that sets it (`voice-id` → `--voice-id`). Unique across kinds. */
  readonly flag?: string;
}

/** How a kind gets its secret (a login token), if it has one. */
export interface SecretSpec {
  /**
   * `required`: cannot connect without one; `optional`: sent when set; `url`: it is part of the
   * address the user pastes (`?token=…`) and is moved to the SecretStore on save.
   */
  readonly mode: 'required' | 'optional' | 'url';
  /** The form section of the token field (`required`/`optional`). */
  readonly section?: FormSection;
  /** The terminal flag for it (`token` → `--token`, and `--token-file` to read it from a file). */
  readonly flag?: string;
}

/** How the terminal adds a server of this kind for one run. */
export interface FlagSpec {
  /** `xiaozhi` → `--xiaozhi VALUE`. */
  readonly name: string;
  /** What VALUE is: a ws:// address (the `url` field) or HOST:PORT (the `host` and `port` fields). */
  readonly value: 'url' | 'host-port';
  /** The usage line's description of the flag. */
  readonly help: string;
  /** The connection's display name, from `{host}` / `{port}` of the value. */
  readonly display: string;
}

export interface ProfileKindSpec {
  readonly kind: string;
  /** In the kind picker and the form title: "XiaoZhi server (device)". */
  readonly title: Texts;
  /** On badges: "XiaoZhi". */
  readonly short: Texts;
  /** Under the kind picker: what this kind of connection does. */
  readonly help: Texts;
  readonly capabilities: ConnectionCapabilities;
  readonly secret?: SecretSpec;
  /** How the Connections page shows where it connects. */
  readonly address: 'url' | 'host-port';
  /** The kind's own profile fields (besides id, kind, name, autoConnect). */
  readonly fields: Readonly<Record<string, TSchema>>;
  /** The form, in order (name and autoConnect are common and added by the form itself). */
  readonly form: readonly FieldSpec[];
  readonly flags?: FlagSpec;
  /**
   * How many tools servers of this kind typically accept (self-hosted XiaoZhi servers cap them),
   * suggested in the form's tool limit field. The real limit is the server's: the user sets it.
   */
  readonly toolLimitHint?: number;
}

/**
 * Ids the app gives connections of its own: the user's own runs, the MCP apps' shared selection
 * and each MCP app. A profile saved under one would share their selection, pace and questions
 * (a hand-edited settings file, or a command with an explicit id), so none may take them.
 */
const RESERVED_IDS = `(?!(?:${LOCAL_CONNECTION.id}|${MCP_CLIENTS_OFFER})$)(?!${MCP_CLIENT_PREFIX})`;

/** Whether `id` is one of those (the rule of `Id`'s pattern, for a refusal that says so). */
export function reservedId(id: string): boolean {
  return id === LOCAL_CONNECTION.id || id === MCP_CLIENTS_OFFER || id.startsWith(MCP_CLIENT_PREFIX);
}
export const Id = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: `^${RESERVED_IDS}[A-Za-z0-9_.:-]+$`,
});
export const ProfileName = Type.String({ minLength: 1, maxLength: 100 });
const closed = { additionalProperties: false } as const;

/**
 * The most services the server accepts (its own limit, told by the user): the Services page warns
 * when the connection is offered more. Nothing is cut: the user chooses what to offer.
 */
export const ToolLimit = Type.Integer({ minimum: 1, maximum: 10_000 });

type Common<K extends string> = {
  kind: TLiteral<K>;
  name: typeof ProfileName;
  autoConnect: TOptional<TBoolean>;
  toolLimit: TOptional<typeof ToolLimit>;
};

/** A kind's spec with its two object schemas: as saved (with id) and as the UI sends it (id optional). */
export type ProfileKind<K extends string, F extends Record<string, TSchema>> = ProfileKindSpec & {
  readonly kind: K;
  readonly fields: F;
  readonly schema: TObject<{ id: typeof Id } & Common<K> & F>;
  readonly inputSchema: TObject<{ id: TOptional<typeof Id> } & Common<K> & F>;
};

/** A kind's spec, checked for the rules the form and flags rely on, with its schemas built. */
export function defineProfileKind<K extends string, F extends Record<string, TSchema>>(
  spec: ProfileKindSpec & { kind: K; fields: F },
): ProfileKind<K, F> {
  for (const field of spec.form) {
    if (!Object.hasOwn(spec.fields, field.key))
      throw new Error(`profile kind '${spec.kind}': form field '${field.key}' has no schema`);
  }
  const common = {
    kind: Type.Literal(spec.kind),
    name: ProfileName,
    autoConnect: Type.Optional(Type.Boolean()),
    toolLimit: Type.Optional(ToolLimit),
  };
  return {
    ...spec,
    schema: Type.Object({ id: Id, ...common, ...spec.fields }, closed),
    inputSchema: Type.Object({ id: Type.Optional(Id), ...common, ...spec.fields }, closed),
  } as unknown as ProfileKind<K, F>;
}

/** The words of `texts` in `language` (English when that language is missing). */
export function textIn(texts: Texts | string, language: string): string {
  if (typeof texts === 'string') return texts;
  return (texts as unknown as Record<string, string>)[language] ?? texts.en;
}

/**
 * Whether `value` satisfies a field's schema, for the subset of JSON Schema profile fields use
 * (string pattern/length, integer range, literal unions). The core validates whole profiles with
 * ajv; this lets the form and the flags say which field is wrong without shipping a validator.
 */
export function fieldAccepts(schema: TSchema, value: unknown): boolean {
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.anyOf)) return (s.anyOf as TSchema[]).some((sub) => fieldAccepts(sub, value));
  if ('const' in s) return value === s.const;
  switch (s.type) {
    case 'string': {
      if (typeof value !== 'string') return false;
      if (typeof s.minLength === 'number' && value.length < s.minLength) return false;
      if (typeof s.maxLength === 'number' && value.length > s.maxLength) return false;
      return typeof s.pattern !== 'string' || new RegExp(s.pattern, 'u').test(value);
    }
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return false;
      if (s.type === 'integer' && !Number.isInteger(value)) return false;
      if (typeof s.minimum === 'number' && value < s.minimum) return false;
      return typeof s.maximum !== 'number' || value <= s.maximum;
    }
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return true;
  }
}

/** The secret is part of the address: the `token` query parameter of a ws(s) URL. */
export function urlHasToken(url: string): boolean {
  return /[?&]token=[^&#\s]/.test(url);
}
