import type { ErrorObject } from 'ajv';

/**
 * One ajv error → one sentence a model can act on ("parameter 'count' must be an integer").
 * ajv's own texts ("must have required property 'x'", paths like "/opts/mode") are written for
 * programmers; the model needs the parameter's name and what to send instead.
 */

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * Paths and names in a sentence are cut to this many code units: they come from the server's
 * data (a key may be megabytes, a path thousands of levels deep), the sentence goes back to it.
 */
const MAX_SHOWN = 120;

/** `s`, or its start and end around an ellipsis that says how much was left out. */
function clip(s: string, max = MAX_SHOWN): string {
  if (s.length <= max) return s;
  const head = Math.floor(max / 2);
  const tail = max - head;
  return `${s.slice(0, head)}…(${s.length - max} chars)…${s.slice(s.length - tail)}`;
}

/**
 * 'opts.mode', 'items[2].name': walks the data so array indices read as indices. A loop over the
 * pointer's segments (however deep the data), each segment and the whole path cut for the sentence.
 */
function paramPath(instancePath: string, data: unknown, child?: string): string {
  const segments = pointerSegments(instancePath);
  if (child !== undefined) segments.push(child);
  const parts: string[] = [];
  let current: unknown = data;
  for (const raw of segments) {
    const segment = clip(raw, 40);
    if (Array.isArray(current)) {
      parts.push(`[${segment}]`);
      current = current[Number(raw)];
    } else {
      parts.push(parts.length === 0 ? segment : `.${segment}`);
      current = isRecord(current) ? current[raw] : undefined;
    }
  }
  return clip(parts.join(''));
}

function subject(path: string): string {
  return path === '' ? 'params' : `parameter '${path}'`;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function typeList(types: unknown): string {
  const list = (Array.isArray(types) ? types : String(types).split(',')).map(String);
  return list.map((t) => TYPE_NAMES[t] ?? t).join(' or ');
}

/** A schema's value in a sentence (schemas of imported tools are not ours either: cut too). */
function show(value: unknown): string {
  return clip(typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)));
}

function plural(n: unknown, one: string, many = `${one}s`): string {
  return `${String(n)} ${n === 1 ? one : many}`;
}

/** For anyOf/oneOf over plain types: "must be a string or a number" beats "matches no form". */
function typeAlternatives(errors: readonly ErrorObject[], at: ErrorObject): string | undefined {
  const branches = errors.filter((e) => e !== at && e.instancePath === at.instancePath);
  if (branches.length === 0 || !branches.every((e) => e.keyword === 'type')) return undefined;
  return branches.map((e) => typeList(e.params.type)).join(' or ');
}

export function describeParamError(
  errors: readonly ErrorObject[] | null | undefined,
  data: unknown,
): string {
  // Without allErrors ajv stops at the first failing keyword; sub-errors of a combinator
  // (anyOf, oneOf, if) come before it, so the last error is the one that decided.
  const error = errors?.[errors.length - 1];
  if (!error) return 'params are invalid';
  const p = error.params as Record<string, unknown>;
  const path = paramPath(error.instancePath, data);
  const subj = subject(path);
  switch (error.keyword) {
    case 'required':
      return `${subject(paramPath(error.instancePath, data, String(p.missingProperty)))} is required`;
    case 'dependentRequired':
    case 'dependencies':
      return `${subject(paramPath(error.instancePath, data, String(p.missingProperty)))} is required when '${paramPath(error.instancePath, data, String(p.property))}' is given`;
    case 'additionalProperties':
      return `unexpected parameter '${paramPath(error.instancePath, data, String(p.additionalProperty))}'`;
    case 'unevaluatedProperties':
      return `unexpected parameter '${paramPath(error.instancePath, data, String(p.unevaluatedProperty))}'`;
    case 'propertyNames':
      return `${subj} has a property name that is not allowed: '${clip(String(p.propertyName))}'`;
    case 'type':
      return `${subj} must be ${typeList(p.type)}`;
    case 'enum':
      return `${subj} must be one of: ${(p.allowedValues as unknown[]).map(show).join(', ')}`;
    case 'const':
      return `${subj} must be ${show(p.allowedValue)}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${subj} must be ${String(p.comparison)} ${String(p.limit)}`;
    case 'multipleOf':
      return `${subj} must be a multiple of ${String(p.multipleOf)}`;
    case 'minLength':
      return `${subj} must have at least ${plural(p.limit, 'character')}`;
    case 'maxLength':
      return `${subj} must have at most ${plural(p.limit, 'character')}`;
    case 'minItems':
      return `${subj} must have at least ${plural(p.limit, 'item')}`;
    case 'maxItems':
      return `${subj} must have at most ${plural(p.limit, 'item')}`;
    case 'minProperties':
      return `${subj} must have at least ${plural(p.limit, 'property', 'properties')}`;
    case 'maxProperties':
      return `${subj} must have at most ${plural(p.limit, 'property', 'properties')}`;
    case 'uniqueItems':
      return `${subj} must not repeat items (items ${String(p.j)} and ${String(p.i)} are the same)`;
    case 'pattern':
      return `${subj} must match the pattern ${String(p.pattern)}`;
    case 'format':
      return `${subj} must be a valid ${String(p.format)}`;
    case 'anyOf':
    case 'oneOf': {
      if (error.keyword === 'oneOf' && Array.isArray(p.passingSchemas)) {
        return `${subj} matches more than one allowed form; make it match exactly one`;
      }
      const types = typeAlternatives(errors ?? [], error);
      return types ? `${subj} must be ${types}` : `${subj} does not match any allowed form`;
    }
    case 'not':
      return `${subj} has a form that is not allowed`;
    case 'false schema':
      return path === '' ? 'params are not allowed' : `unexpected parameter '${path}'`;
    default:
      return `${subj} ${error.message ?? 'is invalid'}`;
  }
}
