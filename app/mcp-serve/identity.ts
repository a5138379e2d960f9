/**
 * Which connection an MCP client is (DESIGN §3): named from its `clientInfo`, so the audit log and
 * the prompts say "Claude Desktop", and identified by a stable id derived from the client's
 * programmatic name, so every session of one app is one connection on the Activity page.
 */
import type { ConnectionRef } from '../contract/connection.js';
import { MAX_CLIENT_NAME_CHARS } from './limits.js';

export interface ClientInfo {
  name?: unknown;
  title?: unknown;
  version?: unknown;
}

/** Control and bidi characters a client could use to make a name read as something else. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

function clean(text: unknown): string {
  if (typeof text !== 'string') return '';
  return text.replace(UNSAFE, '').replace(/\s+/g, ' ').trim().slice(0, MAX_CLIENT_NAME_CHARS);
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
