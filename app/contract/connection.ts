/**
 * Which connection something belongs to. Profile ids identify (two profiles may share a name);
 * the name is only for display and is what the audit log shows next to the id.
 */
export interface ConnectionRef {
  id: string;
  name: string;
}

/** The connection of a run the user started from the app itself ("Try it", the terminal). */
export const LOCAL_CONNECTION: ConnectionRef = { id: 'local', name: 'local' };

/** Connection lifecycle (DESIGN §3), as every host and UI sees it. */
export type ConnectionState =
  | { status: 'idle' }
  | { status: 'connecting'; attempt: number }
  | { status: 'authenticating' }
  | { status: 'ready'; since: number }
  | { status: 'reconnecting'; attempt: number; nextAt: number; lastError: string }
  | { status: 'offline'; reason: OfflineReason; message: string };

export type OfflineReason = 'stopped' | 'auth_failed' | 'token_expired' | 'config';

/** What a connection's dialect can carry; the UI disables what it cannot. */
export interface ConnectionCapabilities {
  /** Typed chat turns. */
  chat: boolean;
  /** Voice turns (microphone up, speech down). */
  voice: boolean;
  /** "Say this" (the character speaks given text). */
  speak: boolean;
}

/** Per-connection registration status shown next to each service set. */
export type RegistrationState =
  | { state: 'registering' }
  | { state: 'registered'; at: number; services: string[] }
  | { state: 'failed'; message: string };
