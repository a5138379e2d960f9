/**
 * The services as MCP clients see them: `title`, `description`, `inputSchema`, annotations from
 * the risk (an imported tool: the hints its server gave, as imported), and an imported tool's
 * `outputSchema`. User-only services are never listed (they are the user's to run, from the app).
 */
import type { ToolEntry } from '../wire/session.js';

export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface McpTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
  annotations: McpToolAnnotations;
}

/**
 * What the risk tells a client: a `read` changes nothing; `private` changes nothing either but
 * carries the user's data out (open world); `write` and `system` change things. Clients use these
 * to decide how to present a tool; the agent's own gate decides whether it runs.
 */
export function annotationsOf(entry: ToolEntry): McpToolAnnotations {
  const title = entry.title ? { title: entry.title } : {};
  if (entry.hint) {
    const h = entry.hint;
    return {
      ...title,
      ...(h.readOnly !== undefined && { readOnlyHint: h.readOnly }),
      ...(h.destructive !== undefined && { destructiveHint: h.destructive }),
      ...(h.idempotent !== undefined && { idempotentHint: h.idempotent }),
      ...(h.openWorld !== undefined && { openWorldHint: h.openWorld }),
    };
  }
  switch (entry.risk) {
    case 'read':
      return { ...title, readOnlyHint: true, openWorldHint: false };
    case 'private':
      return { ...title, readOnlyHint: true, openWorldHint: true };
    case 'write':
    case 'system':
      return { ...title, readOnlyHint: false, destructiveHint: true };
  }
}

/** Only an object schema can be an MCP output schema; anything else is left out. */
function objectSchema(schema: Record<string, unknown> | undefined): McpTool['outputSchema'] {
  return schema && schema.type === 'object' ? (schema as McpTool['outputSchema']) : undefined;
}

export function mcpTool(entry: ToolEntry): McpTool {
  const output = objectSchema(entry.outputSchema);
  return {
    name: entry.name,
    ...(entry.title ? { title: entry.title } : {}),
    description: entry.description,
    inputSchema: { ...entry.inputSchema, type: 'object' },
    ...(output ? { outputSchema: output } : {}),
    annotations: annotationsOf(entry),
  };
}

/** One page of tools from `cursor` (the name of the first tool not sent yet). */
export function toolsPage(
  tools: readonly McpTool[],
  cursor: string | undefined,
  size: number,
): { tools: McpTool[]; nextCursor?: string } | undefined {
  let start = 0;
  if (cursor !== undefined && cursor !== '') {
    start = tools.findIndex((t) => t.name === cursor);
    if (start < 0) return undefined;
  }
  const end = Math.min(tools.length, start + Math.max(1, size));
  return {
    tools: tools.slice(start, end),
    ...(end < tools.length ? { nextCursor: tools[end]!.name } : {}),
  };
}
