/**
 * What one MCP client can make the agent hold (DESIGN §1.7). A client is a local app the user
 * configured, but a buggy or hostile one must still not exhaust memory: each bound below is
 * enforced where the client's bytes first arrive.
 */

/** One JSON-RPC message (a line on stdio or the socket, a POST body over HTTP). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Calls one session may have waiting or running at once; more are refused until some end. */
export const MAX_CALLS_PER_SESSION = 32;
/** Tools per `tools/list` page. */
export const TOOLS_PAGE_SIZE = 100;
/** A result's text for an MCP client (larger than the voice servers' 8 KB; still bounded). */
export const RESULT_TEXT_BYTES = 512 * 1024;
/** Live HTTP sessions; past this the least recently used one is closed for a new one. */
export const MAX_HTTP_SESSIONS = 32;
/**
 * Open HTTP connections at once (each session's POSTs and its GET stream, with room to spare);
 * past this, a new one is closed at once, so a local process cannot hold every file handle.
 */
export const MAX_HTTP_CONNECTIONS = 128;
/** A client's name as the audit log and the prompts show it. */
export const MAX_CLIENT_NAME_CHARS = 64;
/**
 * Answers waiting to be written to one stream client (the socket, stdio) past which its requests
 * are no longer read until it has read them: a client cannot queue answers by not reading.
 */
export const UNREAD_ANSWERS_PAUSE_BYTES = 1024 * 1024;
/**
 * Answers waiting past which the client is cut off. Reading stops at the bound above, but answers
 * already under way (one burst of requests, calls still running) can still pile up behind it.
 */
export const MAX_UNREAD_ANSWER_BYTES = 16 * 1024 * 1024;
