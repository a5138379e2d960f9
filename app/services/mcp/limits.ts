/**
 * Bounds on what an MCP server may send (DESIGN §1.7): an imported server is code someone else
 * wrote, so every list, string and schema it hands us has a stated limit. Past a limit the rest is
 * dropped and the server's row says so; nothing a server sends can exhaust memory or the stack.
 */
export const MCP_LIMITS = {
  /** Tools taken from one server; more are not offered (the row says how many were left out). */
  toolsPerServer: 256,
  /** `tools/list` pages followed before giving up on a cursor that never ends. */
  listPages: 32,
  /** A tool name as the server spells it. */
  toolNameChars: 128,
  /** What the model reads about a tool; longer descriptions are cut. */
  descriptionChars: 4000,
  /** An input or output schema as JSON text, and how deeply it may nest. */
  schemaBytes: 64 * 1024,
  schemaDepth: 32,
  /** One JSON-RPC message on a stdio server's stdout (a media file read as base64 can be large). */
  messageBytes: 16 * 1024 * 1024,
  /** A tool result's content blocks looked at. */
  contentBlocks: 200,
  /** Text gathered from a result before it is cut for the voice servers. */
  resultTextChars: 1024 * 1024,
  /**
   * A result's `structuredContent`: as JSON at most `resultTextChars`, nested at most this deep
   * (the depth params may have); past either it is not passed on, and the text says so.
   */
  resultDepth: 64,
  /**
   * Parts of an input or output schema, once its `$ref`s are inlined, the validator is given
   * (checkNodes): each is code the validator compiles (50-125 µs a part here) and work each check
   * may repeat for every value. Real servers' schemas have tens to a few hundred (1000 properties
   * with a type and a description: 2003); a 4.5 KB schema whose `$ref`s fan out to 60 × 151
   * `anyOf` branches has 27 000 and took 2 s to compile and 16 s to check a 9 KB result.
   */
  schemaCheckNodes: 5000,
  /**
   * One output check's bound: the result's values × the schema's parts (checkNodes). Checking
   * costs at most that many steps, 180-270 ns each measured here when every `anyOf` branch fails
   * and builds an error (0.1-0.7 ns for ordinary schemas), so this keeps a check under ~15 ms.
   * Past it a structured result is not checked and goes on as text only.
   */
  outputCheckSteps: 50_000,
  /** Lines kept per server for the log view, and the length of each. */
  logLines: 500,
  logLineChars: 2000,
  /** Import: the size of a config file and the servers read from it. */
  importFileBytes: 1024 * 1024,
  importServers: 100,
  /** Previews waiting for confirmation. */
  pendingImports: 8,
} as const;

/**
 * Results given to voice servers are cut to this many bytes of UTF-8 with a note: the XiaoZhi MCP
 * dialects' limit (app/wire/kit/mcp-server.ts) and the smallest of all dialects, so a result fits
 * every one of them whole.
 */
export const MCP_RESULT_BYTES = 8000;

/** The depth of a JSON value, stopping as soon as `limit` is passed (never recursing further). */
export function depthExceeds(value: unknown, limit: number): boolean {
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 0 }];
  while (stack.length) {
    const { v, d } = stack.pop()!;
    if (d > limit) return true;
    if (v && typeof v === 'object') {
      for (const child of Object.values(v as Record<string, unknown>)) {
        if (child && typeof child === 'object') stack.push({ v: child, d: d + 1 });
      }
    }
  }
  return false;
}

/** How many values (objects, arrays, primitives) a JSON value holds, counted up to `limit` + 1. */
export function nodesWithin(value: unknown, limit: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length && count <= limit) {
    const v = stack.pop();
    count += 1;
    // A loop, not a spread: a 300 000-item array as arguments would overflow the stack.
    if (v && typeof v === 'object') for (const child of Object.values(v)) stack.push(child);
  }
  return count;
}

/** A string cut to `max` characters with an ellipsis, never inside a surrogate pair. */
export function cutChars(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
