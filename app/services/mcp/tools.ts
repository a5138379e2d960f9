/**
 * What a server lists, read liberally but bounded (DESIGN §1.4, §1.7): each tool is checked on its
 * own, so one with a broken schema is a problem on its row while the others are offered. Names,
 * titles and descriptions are cut; schemas over the size or depth limit, or too costly to check, are
 * refused (an output schema too costly to check is left out instead, and the tool offered).
 */
import type { McpToolHint } from '../../contract/mcp.js';
import { oneLine, withoutUnsafeChars } from '../../unsafe-chars.js';
import { cutChars, depthExceeds, MCP_LIMITS } from './limits.js';
import { ANNOTATIONS, SCHEMA_MAPS } from '../schema-keywords.js';

/**
 * A title is one line of the permission prompt ("… wants to run <title>"): longer ones would push
 * the rest of the question (which server, which service) out of sight.
 */
export const TITLE_CHARS = 80;

/**
 * What an input or output schema may grow to once its `$ref`s are inlined for the model and the
 * gate (inlineRefs). A few `$ref`s to one big definition multiply it: a 42 KB schema can inline
 * to 61 MB. Four times the size accepted as sent leaves room for any schema that shares
 * definitions sensibly.
 */
export const INLINED_SCHEMA_BYTES = 4 * MCP_LIMITS.schemaBytes;

/** The longest `$ref` followed: real ones name a definition or two (`#/$defs/Address`). */
const MAX_REF_CHARS = 512;

/**
 * Schema bytes one server's tools may bring in all (input and output schemas, as inlined): each is
 * compiled into a validator, which for a large schema takes most of a second, and 256 tools of
 * 64 KB would stop the agent for minutes at each listing. Tools past it are left out, named on the
 * server's row.
 */
export const SERVER_SCHEMA_BYTES = 2 * 1024 * 1024;

export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /**
   * The input schema with its `$ref`s inlined (inlineRefs): what voice servers and MCP clients
   * see, and what the gate checks calls against.
   */
  shownSchema: Record<string, unknown>;
  /** The output schema, inlined the same way: what MCP clients see and results are checked with. */
  outputSchema?: Record<string, unknown>;
  /**
   * The tool declared an output schema too costly to check (checkNodes), left out: its results
   * go on as text only, since their structure could not be checked against what it promised.
   */
  outputUnchecked?: true;
  hint: McpToolHint;
}

export interface ToolProblem {
  tool: string;
  problem: string;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkSchema(schema: unknown, what: string): Record<string, unknown> | string {
  if (!isRecord(schema)) return `its ${what} is not a JSON Schema object`;
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch {
    return `its ${what} cannot be read as JSON`;
  }
  if (text.length > MCP_LIMITS.schemaBytes)
    return `its ${what} is ${text.length} bytes; at most ${MCP_LIMITS.schemaBytes} are accepted`;
  if (depthExceeds(schema, MCP_LIMITS.schemaDepth))
    return `its ${what} nests deeper than ${MCP_LIMITS.schemaDepth} levels`;
  return JSON.parse(text) as Record<string, unknown>;
}

const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);

function hintOf(annotations: unknown): McpToolHint {
  if (!isRecord(annotations)) return {};
  const hint: McpToolHint = {};
  const ro = bool(annotations.readOnlyHint);
  const de = bool(annotations.destructiveHint);
  const id = bool(annotations.idempotentHint);
  const ow = bool(annotations.openWorldHint);
  if (ro !== undefined) hint.readOnly = ro;
  if (de !== undefined) hint.destructive = de;
  if (id !== undefined) hint.idempotent = id;
  if (ow !== undefined) hint.openWorld = ow;
  return hint;
}

/**
 * The tools of one `tools/list` (all pages), each either usable or a problem; `notes` are about
 * tools offered with a part left out, for the server's log.
 */
export function readTools(raw: readonly unknown[]): {
  tools: ListedTool[];
  problems: ToolProblem[];
  notes: ToolProblem[];
} {
  const tools: ListedTool[] = [];
  const problems: ToolProblem[] = [];
  const notes: ToolProblem[] = [];
  const seen = new Set<string>();
  let schemaBytes = 0;
  const budgetSpent = `the server's schemas pass ${SERVER_SCHEMA_BYTES} bytes in all with this tool; it is left out`;
  for (const item of raw) {
    if (tools.length + problems.length >= MCP_LIMITS.toolsPerServer) {
      problems.push({
        tool: '…',
        problem: `the server lists ${raw.length} tools; only the first ${MCP_LIMITS.toolsPerServer} are taken`,
      });
      break;
    }
    if (!isRecord(item) || typeof item.name !== 'string' || item.name === '') {
      problems.push({ tool: '?', problem: 'a listed tool has no name' });
      continue;
    }
    const name = item.name;
    if (name.length > MCP_LIMITS.toolNameChars) {
      problems.push({ tool: cutChars(name, 40), problem: 'its name is too long' });
      continue;
    }
    if (seen.has(name)) {
      problems.push({ tool: name, problem: 'listed twice; the first one is used' });
      continue;
    }
    seen.add(name);
    if (isRecord(item.execution) && item.execution.taskSupport === 'required') {
      problems.push({
        tool: name,
        problem: 'it runs only as an MCP task, which the agent does not support yet',
      });
      continue;
    }
    const input = checkSchema(item.inputSchema, 'input schema');
    if (typeof input === 'string') {
      problems.push({ tool: name, problem: input });
      continue;
    }
    if (input.type !== 'object') {
      problems.push({ tool: name, problem: 'its input schema is not of type "object"' });
      continue;
    }
    if (schemaBytes >= SERVER_SCHEMA_BYTES) {
      problems.push({ tool: name, problem: budgetSpent });
      continue;
    }
    // Refused rather than offered with a loosened schema: the tool is described to the model and
    // its calls are checked by the gate with this one schema, so both must hold all of it.
    const shownSchema = inlineRefs(input);
    if (typeof shownSchema === 'string') {
      problems.push({ tool: name, problem: shownSchema });
      continue;
    }
    // Refused for the same reason: the gate checks every call against it, before asking the user.
    if (checkNodes(shownSchema, MCP_LIMITS.schemaCheckNodes) > MCP_LIMITS.schemaCheckNodes) {
      problems.push({ tool: name, problem: tooCostly('input schema') });
      continue;
    }
    let output: Record<string, unknown> | undefined;
    let outputUnchecked = false;
    if (item.outputSchema !== undefined) {
      const checked = checkSchema(item.outputSchema, 'output schema');
      const inlined = typeof checked === 'string' ? checked : inlineRefs(checked, 'output schema');
      if (typeof inlined === 'string') {
        problems.push({ tool: name, problem: inlined });
        continue;
      }
      // The tool works without it (results as text), so it is offered with the schema left out.
      if (checkNodes(inlined, MCP_LIMITS.schemaCheckNodes) > MCP_LIMITS.schemaCheckNodes) {
        notes.push({
          tool: name,
          problem: `${tooCostly('output schema')}; it is left out and the tool's results are passed on as text only`,
        });
        outputUnchecked = true;
      } else output = inlined;
    }
    // What the registry and the output check compile: the schemas as inlined.
    const bytes = JSON.stringify(shownSchema).length + JSON.stringify(output ?? null).length;
    if (schemaBytes + bytes > SERVER_SCHEMA_BYTES) {
      problems.push({ tool: name, problem: budgetSpent });
      continue;
    }
    schemaBytes += bytes;
    const annotations = isRecord(item.annotations) ? item.annotations : {};
    // The title reaches the permission prompt: one line, nothing that reorders or hides text.
    const shown = (v: unknown) => (typeof v === 'string' ? oneLine(v) : '');
    const title = cutChars(
      shown(item.title) || shown(annotations.title) || oneLine(name) || 'unnamed tool',
      TITLE_CHARS,
    );
    // The description is for the model: its lines stay, characters that hide words do not.
    const description =
      typeof item.description === 'string' ? withoutUnsafeChars(item.description).trim() : '';
    tools.push({
      name,
      title,
      description: cutChars(
        description || `${title} (a tool of an imported MCP server)`,
        MCP_LIMITS.descriptionChars,
      ),
      inputSchema: input,
      shownSchema,
      ...(output ? { outputSchema: output } : {}),
      ...(outputUnchecked ? { outputUnchecked: true as const } : {}),
      hint: hintOf(item.annotations),
    });
  }
  return { tools, problems, notes };
}

const tooCostly = (what: string) =>
  `its ${what} has more than ${MCP_LIMITS.schemaCheckNodes} parts to check once its $refs are expanded`;

/**
 * The parts of a schema a validator works through, counting no further than `limit` + 1: every
 * object, array element and keyword value (an `anyOf` branch, a property's schema, an `enum`
 * value, a `required` name), annotations aside. What a check costs grows with it (MCP_LIMITS.
 * schemaCheckNodes), and so does compiling it. Without recursion: the schema is inlined already,
 * and a walk of it is bounded by its size (INLINED_SCHEMA_BYTES).
 */
export function checkNodes(schema: unknown, limit: number): number {
  // 'schema': keywords; 'map': names of properties (not keywords) to schemas; 'data': values.
  const stack: { v: unknown; as: 'schema' | 'map' | 'data' }[] = [{ v: schema, as: 'schema' }];
  let count = 0;
  while (stack.length && count <= limit) {
    const { v, as } = stack.pop()!;
    count += 1;
    if (Array.isArray(v)) for (const item of v) stack.push({ v: item, as });
    else if (isRecord(v))
      for (const [k, child] of Object.entries(v)) {
        if (as !== 'schema') stack.push({ v: child, as: as === 'map' ? 'schema' : 'data' });
        else if (ANNOTATIONS.has(k)) continue;
        else if (DATA.has(k)) stack.push({ v: child, as: 'data' });
        else stack.push({ v: child, as: SCHEMA_MAPS.has(k) && isRecord(child) ? 'map' : 'schema' });
      }
  }
  return count;
}

/**
 * An imported schema as our validator takes it (the gate checks a tool's params with it, and its
 * structured results):
 * - `$schema` dropped (MCP servers name draft-07 or 2020-12; the keywords that matter are the
 *   same, and an unknown `$schema` would make the validator refuse the whole schema);
 * - the keywords whose cost the server chooses, dropped: `pattern` and `patternProperties` run the
 *   server's regular expressions on the call's text (`^(a+)+$` on 31 characters took 50 s, the
 *   event loop stopped), and `uniqueItems` compares every pair of items (20 000 objects: 7 s).
 *   The check gets looser, never stricter: the server still checks its own params, and the schema
 *   the model is shown keeps them;
 * - `$async` dropped: the check is made as it is written, synchronously.
 */
export function validationSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  return withoutCostlyKeywords(rest) as Record<string, unknown>;
}

/** Keywords whose values are data, not schemas: left as they are. */
const DATA = new Set(['enum', 'const', 'default', 'examples', 'required']);

function withoutCostlyKeywords(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutCostlyKeywords);
  if (!isRecord(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'pattern' || k === 'patternProperties' || k === 'uniqueItems') continue;
    // `$async` would make the validator return a promise: truthy, so every value would pass, and
    // its rejection for a bad one nobody awaits, which ends the process (Node's default).
    if (k === '$async') continue;
    if (DATA.has(k)) out[k] = v;
    else if (SCHEMA_MAPS.has(k) && isRecord(v))
      out[k] = Object.fromEntries(
        Object.entries(v).map(([name, s]) => [name, withoutCostlyKeywords(s)]),
      );
    else out[k] = withoutCostlyKeywords(v);
  }
  // Names the dropped patterns allowed would now be refused as additional: allow them all.
  if (Object.hasOwn(node, 'patternProperties') && out.additionalProperties === false)
    delete out.additionalProperties;
  return out;
}

/** Keywords that only serve `$ref` resolution, done by inlining: left out of the result. */
const REF_ONLY = new Set([
  '$defs',
  'definitions',
  '$schema',
  '$id',
  '$anchor',
  '$dynamicAnchor',
  '$recursiveAnchor',
]);

/**
 * How deep a schema may nest once its `$ref`s are inlined: the nesting sent is bounded by
 * MCP_LIMITS.schemaDepth, and following references may add as much again.
 */
export const INLINED_SCHEMA_DEPTH = 2 * MCP_LIMITS.schemaDepth;

/**
 * The schema with its local `$ref`s (`#`, `#/$defs/…`, `#/definitions/…`, any pointer into the
 * schema) replaced by what they point at. It is what the model is shown and what the gate checks
 * calls against (validationSchema of it), so both see the same thing, and with no `$ref` left a
 * check costs at most the size of this schema: a few kilobytes of references fanning out
 * (`a_i = {allOf: [a_{i+1}, a_{i+1}]}`) no longer make every check take 2^N steps.
 *
 * A recursive schema (a tree, a linked list) is cut where a `$ref` comes back inside its own
 * expansion: that place accepts any value (`{}`). Calls are then checked down to the first
 * repetition and deeper levels are left to the server to check, as are the levels a model sees;
 * the gate's bound on how deep params nest (64 levels) still holds everywhere.
 *
 * Returns a problem, worded for the server's row, instead of cutting anything else: a `$ref` that
 * cannot be followed (the validator used to refuse those too), or a result longer than
 * INLINED_SCHEMA_BYTES as JSON or nested deeper than INLINED_SCHEMA_DEPTH.
 */
export function inlineRefs(
  schema: Record<string, unknown>,
  what = 'input schema',
): Record<string, unknown> | string {
  // The JSON length of what has been produced so far. It bounds the work too: every step below
  // adds to it, except following a `$ref` to another `$ref`, which the depth bounds.
  let size = 0;
  let problem: string | undefined;
  const fail = (text: string): undefined => {
    problem ??= text;
    return undefined;
  };
  const grow = (chars: number): boolean => {
    size += chars;
    if (size <= INLINED_SCHEMA_BYTES) return true;
    fail(`its ${what} grows past ${INLINED_SCHEMA_BYTES} bytes once its $refs are expanded`);
    return false;
  };
  // Each ref is looked up once: a 50 KB ref reached thousands of times was split and decoded on
  // every visit (4 s for one tool). A ref longer than any real one points nowhere.
  const resolved = new Map<string, unknown>();
  const resolve = (ref: string): unknown => {
    if (ref === '#') return schema;
    if (!ref.startsWith('#/') || ref.length > MAX_REF_CHARS) return undefined;
    if (resolved.has(ref)) return resolved.get(ref);
    let at: unknown = schema;
    for (const raw of ref.slice(2).split('/')) {
      let key: string;
      try {
        key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      } catch {
        at = undefined; // malformed escapes: nowhere
        break;
      }
      if (!isRecord(at) || !Object.hasOwn(at, key)) {
        at = undefined;
        break;
      }
      at = at[key];
    }
    resolved.set(ref, at);
    return at;
  };
  const data = (value: unknown): unknown => {
    // Values (enum, const, default…) are kept as they are, whatever keys they hold.
    if (!grow((JSON.stringify(value) ?? 'null').length)) return undefined;
    return value;
  };
  const walk = (node: unknown, chain: readonly string[], depth: number): unknown => {
    if (problem !== undefined) return undefined; // given up: unwind without more work
    if (depth > INLINED_SCHEMA_DEPTH)
      return fail(
        `its ${what} nests deeper than ${INLINED_SCHEMA_DEPTH} levels once its $refs are expanded`,
      );
    if (Array.isArray(node)) {
      grow(2 + Math.max(0, node.length - 1)); // brackets and commas
      return node.map((n) => walk(n, chain, depth + 1));
    }
    if (!isRecord(node)) return data(node);
    if (typeof node.$ref === 'string') {
      const ref = node.$ref;
      const { $ref: _r, ...siblings } = node;
      // Back inside its own expansion: a recursive schema, cut here (see above).
      if (chain.includes(ref)) return walk(siblings, chain, depth + 1);
      const target = resolve(ref);
      if (typeof target === 'boolean') return target ? walk(siblings, chain, depth + 1) : false;
      if (!isRecord(target))
        return fail(`its ${what} has a $ref the agent cannot follow: ${cutChars(ref, 80)}`);
      // Following a reference adds no nesting to the result, but a chain of them is bounded too.
      if (chain.length > INLINED_SCHEMA_DEPTH)
        return fail(`its ${what} chains more than ${INLINED_SCHEMA_DEPTH} $refs`);
      return walk({ ...target, ...siblings }, [...chain, ref], depth);
    }
    const out: Record<string, unknown> = {};
    grow(2); // braces
    for (const [k, v] of Object.entries(node)) {
      if (REF_ONLY.has(k)) continue;
      grow(JSON.stringify(k).length + 2); // the key, its colon and a comma
      if (DATA.has(k)) out[k] = data(v);
      else if (SCHEMA_MAPS.has(k) && isRecord(v)) {
        // A map of names to schemas: the names are not keywords (a property may be called "$ref").
        grow(2);
        const map: Record<string, unknown> = {};
        for (const [name, sub] of Object.entries(v)) {
          grow(JSON.stringify(name).length + 2);
          map[name] = walk(sub, chain, depth + 2);
        }
        out[k] = map;
      } else out[k] = walk(v, chain, depth + 1);
      if (problem !== undefined) return undefined;
    }
    return out;
  };
  const out = walk(schema, ['#'], 0);
  if (problem !== undefined) return problem;
  return isRecord(out) ? out : `its ${what} is not a JSON Schema object`;
}
