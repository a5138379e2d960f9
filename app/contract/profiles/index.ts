/**
 * The connection kinds the app ships (the contract's one list; the core's is `app/wire/dialects.ts`).
 * Everything kind-specific above the wire is derived from here: the profile schemas and types, the
 * connection form, the terminal flags, the Connections page. Adding a kind is a file beside this
 * one plus one entry below (and its dialect folder under app/wire/ plus one entry there).
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { adventProfile } from './advent.js';
import { endpointProfile } from './endpoint.js';
import { robotProfile } from './robot.js';
import { Id, ProfileName, type ProfileKindSpec } from './spec.js';
import { xiaozhiProfile } from './xiaozhi.js';

export * from './spec.js';
export { PROFILE_PATTERNS } from './patterns.js';
export { adventProfile, endpointProfile, robotProfile, xiaozhiProfile };

export const PROFILE_KIND_SPECS = [
  adventProfile,
  xiaozhiProfile,
  endpointProfile,
  robotProfile,
] as const;

type Specs = typeof PROFILE_KIND_SPECS;
type SchemasOf<T extends readonly { schema: TSchema }[]> = {
  -readonly [K in keyof T]: T[K]['schema'];
};
type InputSchemasOf<T extends readonly { inputSchema: TSchema }[]> = {
  -readonly [K in keyof T]: T[K]['inputSchema'];
};

/** A profile as saved in settings. Tokens are never here: they live in the SecretStore. */
export const ProfileSchema = Type.Union(
  PROFILE_KIND_SPECS.map((s) => s.schema) as unknown as SchemasOf<Specs>,
);
/** A profile as the UI sends it: `id` absent for a new one. */
export const ProfileInputSchema = Type.Union(
  PROFILE_KIND_SPECS.map((s) => s.inputSchema) as unknown as InputSchemasOf<Specs>,
);
export type Profile = Static<typeof ProfileSchema>;
export type ProfileInput = Static<typeof ProfileInputSchema>;
export type ProfileKind = Profile['kind'];
export const PROFILE_KINDS = PROFILE_KIND_SPECS.map((s) => s.kind) as readonly ProfileKind[];
export type AdventProfile = Extract<Profile, { kind: 'advent' }>;
export type XiaozhiProfile = Extract<Profile, { kind: 'xiaozhi' }>;
export type EndpointProfile = Extract<Profile, { kind: 'endpoint' }>;
export type RobotProfile = Extract<Profile, { kind: 'robot' }>;

/**
 * Any kind's profile as a host receives it, before the core checks it against its kind's schema:
 * the hosts validate the shape, the core (which knows the kinds it was started with) the rest.
 */
export const AnyProfileInputSchema = Type.Object(
  { id: Type.Optional(Id), kind: Type.String({ minLength: 1, maxLength: 40 }), name: ProfileName },
  { additionalProperties: true },
);

/** The spec as the UI receives it in the snapshot (the built schemas stay in the core). */
export type ProfileKindView = ProfileKindSpec;

export function kindView(spec: ProfileKindSpec): ProfileKindView {
  const { kind, title, short, help, capabilities, secret, address, fields, form, flags } = spec;
  const { toolLimitHint } = spec;
  return {
    kind,
    title,
    short,
    help,
    capabilities,
    secret,
    address,
    fields,
    form,
    flags,
    ...(toolLimitHint !== undefined && { toolLimitHint }),
  };
}
