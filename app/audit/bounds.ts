/**
 * How much of a call the audit log keeps (DESIGN §1.7). Names and ids come from remote servers:
 * a 3 MB method name must cost the log a few hundred bytes, not 3 MB in the file, the index and
 * every cache. What is cut keeps the sha256 of the whole, so a record still says exactly what was
 * sent; the params' sha256 (`paramsSha256`) does the same for param keys and strings.
 */
import { sha256Hex } from './redact.js';

/** Service name, call id, connection name and id, dialect, error code: code units kept. */
export const MAX_NAME = 128;
/** The message the server was given: code units kept. */
export const MAX_MESSAGE = 1000;
/** Params deeper than this are refused at the gate (`invalid_params`), never walked further. */
export const MAX_PARAMS_DEPTH = 64;
/** Params with more values than this (objects, arrays and leaves together) are refused too. */
export const MAX_PARAMS_VALUES = 100_000;

/**
 * `s` when it fits in `max` code units; otherwise its first `max` (a surrogate pair never split),
 * how much was cut and the sha256 of the whole: `name…(+3145600 chars, sha256 <64 hex>)`.
 */
export function cutName(s: string, max = MAX_NAME): string {
  if (s.length <= max) return s;
  let keep = max;
  const last = s.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep -= 1;
  return `${s.slice(0, keep)}…(+${s.length - keep} chars, sha256 ${sha256Hex(s)})`;
}

/**
 * Why `params` are too deep or too large to take, in a sentence for the model; undefined when they
 * are fine. Walks with an explicit stack (never the call stack) and stops at the first limit, so
 * 100 000 levels cost 65 steps.
 */
export function paramsShapeProblem(params: unknown): string | undefined {
  const stack: { value: unknown; depth: number }[] = [{ value: params, depth: 0 }];
  let values = 0;
  try {
    while (stack.length > 0) {
      const { value, depth } = stack.pop() as { value: unknown; depth: number };
      values += 1;
      if (values > MAX_PARAMS_VALUES) {
        return `params hold more than ${MAX_PARAMS_VALUES} values; send less data in one call`;
      }
      if (typeof value !== 'object' || value === null) continue;
      if (depth >= MAX_PARAMS_DEPTH) {
        return `params are nested more than ${MAX_PARAMS_DEPTH} levels deep; send flatter params`;
      }
      if (ArrayBuffer.isView(value)) continue;
      const children = Array.isArray(value) ? value : Object.values(value);
      if (values + stack.length + children.length > MAX_PARAMS_VALUES) {
        return `params hold more than ${MAX_PARAMS_VALUES} values; send less data in one call`;
      }
      for (const child of children) stack.push({ value: child, depth: depth + 1 });
    }
  } catch {
    return 'params could not be read';
  }
  return undefined;
}
