/**
 * Where this host really keeps tokens, in words a person can check: the Electron app's system
 * keychain, its weak fallback on Linux without a keyring, the terminal and browser hosts'
 * `secrets.json` in the data folder, or memory. Read from SettingsView.secrets.kind (the
 * SecretStore's own name for itself), so a sentence cannot promise a keychain the host lacks.
 */
import type { SettingsView } from '../../app/contract/index.js';

export type SecretsPlace = 'keychain' | 'weak' | 'file' | 'memory' | 'other';

export function secretsPlace(secrets: SettingsView['secrets'] | undefined): SecretsPlace {
  switch (secrets?.kind) {
    case 'os-keychain':
    case 'safeStorage':
      return 'keychain';
    case 'basic_text':
      return 'weak';
    case 'file':
      return 'file';
    case 'memory':
      return 'memory';
    default:
      return 'other';
  }
}
