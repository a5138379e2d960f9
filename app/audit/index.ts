/** The audit log's public face for the composition root (agent.ts). */
export { AuditLog, type AuditLogOptions, type AuditLogStats } from './log.js';
export { exportAudit, toCsv, toJson } from './export.js';
export { verifyAudit, type ChainHead } from './verify.js';
export { canonicalJson, redactParams, sha256Hex } from './redact.js';
export { GENESIS_HASH } from './chain.js';
