/**
 * Which connection an MCP client is (DESIGN §3): named from its `clientInfo`, so the audit log and
 * the prompts say "Claude Desktop", and identified by a stable id derived from the client's
 * programmatic name, so every session of one app is one connection on the Activity page.
 */
import type { ConnectionRef } from '../contract/connection.js';
import { oneLine } from '../unsafe-chars.js';
import { MAX_CLIENT_NAME_CHARS } from './limits.js';

export interface ClientInfo {
  name?: unknown;
  title?: unknown;
  version?: unknown;
}

function clean(text: unknown): string {
  if (typeof text !== 'string') return '';
  return oneLine(text).slice(0, MAX_CLIENT_NAME_CHARS);
}

/** The connection an MCP client's calls come on. */
export function clientConnection(info: ClientInfo | undefined): ConnectionRef {
  const name = clean(info?.name);
  const shown = clean(info?.title) || name || 'MCP client';
  // The contract's id alphabet ([A-Za-z0-9_.:-], at most 64): `mcp:` and at most 48 more.
  const slug =
    name
      .toLowerCase()
      .replace(/[^a-z0-9_.-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 48) || 'client';
  return { id: `mcp:${slug}`, name: shown };
}
