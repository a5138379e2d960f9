export const POLICIES = ['allow', 'ask', 'deny'] as const;
export type Policy = (typeof POLICIES)[number];

export const PROMPT_ANSWERS = ['once', 'session', 'always', 'deny'] as const;
export type PromptAnswer = (typeof PROMPT_ANSWERS)[number];

export type Risk = 'read' | 'write' | 'system';

/** A permission question waiting for the user (DESIGN §3 Broker). */
export interface PendingPrompt {
  id: string;
  connection: string;
  service: string;
  /** The key a remembered grant is stored under: the service name, or `name:action` for escalations like overwrite. */
  grantKey: string;
  params: unknown;
  /** One human sentence: "Create file notes/todo.txt (1.2 KB) in ~/Documents/Advent Agent". */
  summary: string;
  resolvedPaths: string[];
  /** Epoch ms. */
  expiresAt: number;
}

export type PromptResolution = PromptAnswer | 'timeout' | 'cancelled';
