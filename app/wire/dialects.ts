/**
 * The connection kinds the core ships (the core's one list; the contract's is
 * `app/contract/profiles/index.ts`). Hosts start the agent with this set; tests may add kinds.
 */
import { adventDialect } from './advent/index.js';
import type { Dialect } from './dialect.js';
import { endpointDialect } from './endpoint/index.js';
import { robotDialect } from './robot/index.js';
import { xiaozhiDialect } from './xiaozhi/index.js';

export const DIALECTS: readonly Dialect[] = [
  adventDialect,
  xiaozhiDialect,
  endpointDialect,
  robotDialect,
];
