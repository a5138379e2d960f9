import { Ajv, type ErrorObject } from 'ajv';
import { ProfileSchema } from '../contract/profiles/index.js';
import { settingsSchema, type Settings } from './schema.js';

// One compiled validator for the process: compiling is the expensive part.
const ajv = new Ajv({ allErrors: true, strict: true });
const check = ajv.compile(settingsSchema);
const shippedProfile = new Ajv({ strict: false }).compile(ProfileSchema);

export type SettingsCheck = { ok: true; value: Settings } | { ok: false; message: string };

/** Whether a saved profile is valid for its kind; the message names what is wrong. */
export type ProfileChecker = (profile: unknown) => { ok: true } | { ok: false; message: string };

/** The kinds the app ships (an agent passes its own set). */
const shippedKinds: ProfileChecker = (profile) =>
  shippedProfile(profile)
    ? { ok: true }
    : { ok: false, message: 'it matches no connection kind this app knows' };

/**
 * The settings schema checks every profile's common shape; `checkProfile` checks each against its
 * kind, so a profile no kind allows makes the file untrusted, as any other invalid value does.
 */
export function validateSettings(
  value: unknown,
  checkProfile: ProfileChecker = shippedKinds,
): SettingsCheck {
  if (!check(value)) return { ok: false, message: describeAjvErrors(check.errors ?? []) };
  for (const [i, profile] of value.connections.entries()) {
    const ok = checkProfile(profile);
    if (!ok.ok) return { ok: false, message: `connections[${i}] ${ok.message}` };
  }
  return { ok: true, value };
}

const MAX_REPORTED = 3;

/**
 * Ajv's errors read like "data/files/maxFileBytes must be >= 1"; people (and log readers) want
 * "files.maxFileBytes must be at least 1". Only the first few are told: one fix usually reveals
 * the rest, and a wall of errors hides the first one.
 */
export function describeAjvErrors(errors: readonly ErrorObject[]): string {
  const lines = [...new Set(errors.map(describeOne))];
  if (lines.length === 0) return 'the value does not match the settings schema';
  const shown = lines.slice(0, MAX_REPORTED).join('; ');
  const more = lines.length - MAX_REPORTED;
  return more > 0 ? `${shown}; and ${more} more problem${more === 1 ? '' : 's'}` : shown;
}

function describeOne(error: ErrorObject): string {
  const where = readablePath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${where} has an unknown key "${String(params.additionalProperty)}"`;
    case 'required':
      return `${where} is missing "${String(params.missingProperty)}"`;
    case 'enum':
      return `${where} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${where} must be ${JSON.stringify(params.allowedValue)}`;
    case 'type':
      return `${where} must be of type ${String(params.type)}`;
    case 'minimum':
      return `${where} must be at least ${String(params.limit)}`;
    case 'maximum':
      return `${where} must be at most ${String(params.limit)}`;
    case 'uniqueItems':
      return `${where} must not contain duplicates`;
    default:
      return `${where} ${error.message ?? 'is invalid'}`;
  }
}

/** "/files/roots/0" → "files.roots[0]"; the root is "the settings". */
function readablePath(instancePath: string): string {
  if (instancePath === '') return 'the settings';
  let out = '';
  for (const raw of instancePath.slice(1).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(part)) out += out ? `.${part}` : part;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}
