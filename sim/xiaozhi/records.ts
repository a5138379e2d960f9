/**
 * What the simulated XiaoZhi server (XiaozhiSim) records and tells, kept apart from the server
 * and connection code so tests, the CLI and both halves of the simulator share one vocabulary.
 */
import type { ProtocolVersion } from '../../app/wire/xiaozhi/binary.js';
import type { SimCallResult, SimTool } from '../kit/mcp-client.js';

/** One connection as the server saw its upgrade request and hello. */
export interface XzConnectionRecord {
  conn: number;
  /** Request headers, names in lowercase. */
  headers: Record<string, string>;
  /** Query parameters of the upgrade URL. */
  query: Record<string, string>;
  /** From `Protocol-Version` (header), 1 when absent or unreadable. */
  protocolVersion: ProtocolVersion;
  /** Where the device said who it is: headers, query parameters, or nowhere. */
  identity: 'headers' | 'query' | 'none';
  deviceId: string | undefined;
  clientId: string | undefined;
  /** The token it presented (after `Bearer `), if any. */
  token: string | undefined;
  /** The device hello, once it came. */
  hello: Record<string, unknown> | undefined;
  /** The session id this server gave the connection in its hello. */
  sessionId: string;
  open: boolean;
  /** Once closed: the close code the device sent (1006 when it sent no close frame). */
  closeCode?: number;
}

/** One message the device sent. */
export type XzReceived =
  | { conn: number; at: number; kind: 'text'; text: string; json: unknown }
  | { conn: number; at: number; kind: 'binary'; bytes: Buffer };

/** A tool as the simulated server keeps it: the same record as the endpoint simulator's. */
export type XzSimTool = SimTool;

/** A call's result as the endpoint simulator reads it, and for protocol errors the code. */
export interface XzCallResult extends SimCallResult {
  /** The JSON-RPC error code, for protocol errors (-32601, -32602, …). */
  code?: number;
  /** The whole JSON-RPC reply as it arrived. */
  raw: Record<string, unknown>;
}

/** A `listen` message as received. */
export interface XzListenEvent {
  conn: number;
  state: string;
  mode?: string;
  text?: string;
}

/** A finished user turn: typed (`listen detect` with text) or spoken (`listen start` … `stop`). */
export interface XzTurn {
  conn: number;
  /** The typed text; '' for a voice turn. */
  text: string;
  voice: boolean;
  /** The voice turn's audio, decoded to PCM s16le 16 kHz mono. */
  pcm: Buffer;
  mode?: string;
}

export type XzSimEvents = {
  connection: { conn: number; remote: string };
  refused: { status: number; reason: string };
  hello: { conn: number; version: unknown };
  tools: { conn: number; tools: XzSimTool[] };
  listChanged: { conn: number };
  call: { conn: number; id: number | string; name: string; args: unknown };
  result: { conn: number; id: number | string; result: XzCallResult };
  listen: XzListenEvent;
  turn: { conn: number; text: string; voice: boolean; audioBytes: number };
  abort: { conn: number; reason?: string };
  violation: { conn: number; message: string };
  /** `code`: the close code the device sent (1006: it sent no close frame). */
  close: { conn: number; code: number };
  /** A turn handler threw, or the MCP handshake failed; conn 0: the listening server failed. */
  error: { conn: number; message: string };
};
