/**
 * Compatibility path for code written before the shared ReconnectingLink (kit/link.ts): the Advent
 * link and its timing now live in `./link.ts`. Import from there; this re-export goes once every
 * importer (sessions.ts, agent.ts, main/headless/io.ts, test helpers) has moved.
 */
export { type Timing, DEFAULT_TIMING } from './link.js';
