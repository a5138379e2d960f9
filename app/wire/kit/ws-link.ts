/**
 * Compatibility path for code written before the shared ReconnectingLink (./link.ts): the
 * WebSocket side of the link now lives in `./ws-dialer.ts`. Import from there; this re-export goes
 * once every importer (sessions.ts, agent.ts, main/headless/io.ts, tests) has moved.
 */
export {
  type WsTiming,
  DEFAULT_WS_TIMING,
  LinkConfigError,
  redactText,
  redactUrl,
} from './ws-dialer.js';
