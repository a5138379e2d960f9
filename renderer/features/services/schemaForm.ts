/**
 * A "Try it" form generated from a service's JSON Schema `parameters`: each property becomes a
 * field (string → text or textarea, enum → select, boolean → checkbox, number/integer → number
 * with min/max, anything else → JSON text), and the typed values are turned back into params.
 * Pure: no DOM, no React.
 */
export type FieldKind = 'text' | 'textarea' | 'select' | 'checkbox' | 'number' | 'json';

export interface Field {
  name: string;
  kind: FieldKind;
  required: boolean;
  title?: string;
  description?: string;
  /** For selects, the allowed values in schema order. */
  options?: readonly (string | number | boolean)[];
  min?: number;
  max?: number;
  integer?: boolean;
  minLength?: number;
  maxLength?: number;
  defaultValue?: unknown;
}

export type FormValues = Record<string, string | boolean>;

export type FieldProblem =
  | { field: string; kind: 'required' | 'number' | 'integer' | 'json' }
  | { field: string; kind: 'min'; min: number }
  | { field: string; kind: 'max'; max: number };

type Schema = Record<string, unknown>;

const LONG_TEXT = /^(content|text|body|message|note|notes|prompt|code|data|script|markdown)$/i;

function isObject(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function typeOf(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === 'string' && x !== 'null');
  if (Array.isArray(schema.enum)) return 'enum';
  if ('const' in schema) return 'enum';
  return undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function fieldOf(name: string, schema: Schema, required: boolean): Field {
  const base = {
    name,
    required,
    title: typeof schema.title === 'string' ? schema.title : undefined,
    description: typeof schema.description === 'string' ? schema.description : undefined,
    defaultValue: schema.default,
  };
  const options = Array.isArray(schema.enum)
    ? schema.enum.filter(
        (x): x is string | number | boolean =>
          typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean',
      )
    : 'const' in schema &&
        (typeof schema.const === 'string' ||
          typeof schema.const === 'number' ||
          typeof schema.const === 'boolean')
      ? [schema.const]
      : undefined;
  if (options && options.length > 0) return { ...base, kind: 'select', options };

  switch (typeOf(schema)) {
    case 'boolean':
      return { ...base, kind: 'checkbox' };
    case 'number':
    case 'integer': {
      const exMin = num(schema.exclusiveMinimum);
      const exMax = num(schema.exclusiveMaximum);
      const integer = typeOf(schema) === 'integer';
      const step = integer ? 1 : 0;
      return {
        ...base,
        kind: 'number',
        integer,
        min: num(schema.minimum) ?? (exMin !== undefined ? exMin + step : undefined),
        max: num(schema.maximum) ?? (exMax !== undefined ? exMax - step : undefined),
      };
    }
    case 'string': {
      const maxLength = num(schema.maxLength);
      const minLength = num(schema.minLength);
      const constrained = typeof schema.pattern === 'string' || typeof schema.format === 'string';
      const long =
        !constrained &&
        ((maxLength !== undefined && maxLength > 1024) ||
          (maxLength === undefined && LONG_TEXT.test(name)));
      return { ...base, kind: long ? 'textarea' : 'text', maxLength, minLength };
    }
    default:
      return { ...base, kind: 'json' };
  }
}

/** The fields of an object schema, in property order (required ones keep their place). */
export function fieldsOf(parameters: unknown): Field[] {
  if (!isObject(parameters) || !isObject(parameters.properties)) return [];
  const required = new Set(
    Array.isArray(parameters.required)
      ? parameters.required.filter((x): x is string => typeof x === 'string')
      : [],
  );
  return Object.entries(parameters.properties).map(([name, schema]) =>
    fieldOf(name, isObject(schema) ? schema : {}, required.has(name)),
  );
}

export function initialValues(fields: Field[]): FormValues {
  const out: FormValues = {};
  for (const f of fields) {
    const d = f.defaultValue;
    if (f.kind === 'checkbox') out[f.name] = d === true;
    else if (f.kind === 'select') {
      const at = f.options?.findIndex((o) => o === d) ?? -1;
      out[f.name] = at >= 0 ? String(at) : f.required && f.options?.length ? '0' : '';
    } else if (f.kind === 'json') out[f.name] = d === undefined ? '' : JSON.stringify(d, null, 2);
    else out[f.name] = d === undefined || d === null ? '' : String(d);
  }
  return out;
}

/**
 * Params from the typed values. Empty optional fields are left out (the service's own default
 * applies); the core validates again with the real schema, this only catches the obvious.
 */
export function collectParams(
  fields: Field[],
  values: FormValues,
): { params: Record<string, unknown>; problems: FieldProblem[] } {
  const params: Record<string, unknown> = {};
  const problems: FieldProblem[] = [];
  for (const f of fields) {
    const raw = values[f.name];
    switch (f.kind) {
      case 'checkbox': {
        const on = raw === true;
        if (on || f.required || f.defaultValue === true) params[f.name] = on;
        break;
      }
      case 'select': {
        const at = typeof raw === 'string' && raw !== '' ? Number(raw) : -1;
        const option = f.options?.[at];
        if (option !== undefined) params[f.name] = option;
        else if (f.required) problems.push({ field: f.name, kind: 'required' });
        break;
      }
      case 'number': {
        const text = typeof raw === 'string' ? raw.trim() : '';
        if (text === '') {
          if (f.required) problems.push({ field: f.name, kind: 'required' });
          break;
        }
        const n = Number(text);
        if (!Number.isFinite(n)) problems.push({ field: f.name, kind: 'number' });
        else if (f.integer && !Number.isInteger(n))
          problems.push({ field: f.name, kind: 'integer' });
        else if (f.min !== undefined && n < f.min)
          problems.push({ field: f.name, kind: 'min', min: f.min });
        else if (f.max !== undefined && n > f.max)
          problems.push({ field: f.name, kind: 'max', max: f.max });
        else params[f.name] = n;
        break;
      }
      case 'json': {
        const text = typeof raw === 'string' ? raw.trim() : '';
        if (text === '') {
          if (f.required) problems.push({ field: f.name, kind: 'required' });
          break;
        }
        try {
          params[f.name] = JSON.parse(text) as unknown;
        } catch {
          problems.push({ field: f.name, kind: 'json' });
        }
        break;
      }
      default: {
        const text = typeof raw === 'string' ? raw : '';
        if (text === '') {
          if (f.required) problems.push({ field: f.name, kind: 'required' });
          break;
        }
        params[f.name] = text;
      }
    }
  }
  return { params, problems };
}
