/**
 * The agent as an MCP server for other apps (issue 12): the Streamable HTTP endpoint's settings
 * and state as every UI sees them. Pure TS: the renderer imports this.
 */
import { Type } from '@sinclair/typebox';

export const DEFAULT_MCP_HTTP_PORT = 8931;

/** Saved in settings: whether `http://127.0.0.1:PORT/mcp` is served, and on which port. */
export interface McpHttpSettings {
  enabled: boolean;
  port: number;
}

export const McpHttpSettingsSchema = Type.Object(
  {
    enabled: Type.Boolean(),
    port: Type.Integer({ minimum: 1024, maximum: 65535 }),
  },
  { additionalProperties: false },
);

/** Why the endpoint could not start: a known reason the UI words, or the system's message. */
export type McpHttpFailure = 'port_in_use' | 'other';

export type McpHttpState =
  | { status: 'off' }
  | { status: 'starting'; port: number }
  /**
   * `hasToken`: whether a bearer token has been made. Until one is, every request is refused; the
   * token itself is never part of the state (it is shown once, when made: `resetMcpHttpToken`).
   */
  | { status: 'listening'; port: number; url: string; hasToken: boolean }
  | { status: 'failed'; port: number; reason: McpHttpFailure; message: string };
