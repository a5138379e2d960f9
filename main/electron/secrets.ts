/**
 * Tokens for the Electron host, encrypted with the OS's own protection through Electron's
 * safeStorage (Keychain on macOS, DPAPI on Windows, the Secret Service or KWallet on Linux) and
 * kept as base64 ciphertexts in one JSON file in userData: mode 0600, replaced atomically. No
 * plaintext value ever reaches the disk, a message, or this object's printed form.
 *
 * Only safeStorage's async API is used: the sync one is deprecated in Electron 45 and blocks the
 * main thread while the Keychain asks the user. On Linux without a keyring (`basic_text`) Electron
 * offers nothing until the app opts in to its hardcoded key (setUsePlainTextEncryption); we opt
 * in and say so in Settings (weak but working), rather than refuse every token.
 */
import { inspect } from 'node:util';
import { safeStorage } from 'electron';
import {
  type BoundedText,
  errorText,
  keepAside,
  readBoundedText,
  writeFileAtomic,
} from '../../app/settings/atomic.js';
import type { SecretStore } from '../../app/settings/secrets.js';

/** The part of Electron's safeStorage we use; injectable so tests run without Electron. */
export interface SafeStorageLike {
  isAsyncEncryptionAvailable(): Promise<boolean>;
  encryptStringAsync(plainText: string): Promise<Buffer>;
  decryptStringAsync(encrypted: Buffer): Promise<{ shouldReEncrypt: boolean; result: string }>;
  /** Linux only; 'basic_text' means no keyring was found and a fixed key protects the data. */
  getSelectedStorageBackend?(): string;
  /** Linux only: allow the fixed key when there is no keyring (a no-op elsewhere). */
  setUsePlainTextEncryption?(usePlainText: boolean): void;
}

export const WEAK_PROTECTION_WARNING =
  'Secrets are stored with weak protection because no system keyring was found (Secret Service ' +
  'or KWallet). Anyone who can read your user folder can recover saved tokens. Install and unlock ' +
  'a keyring (for example gnome-keyring), then enter the tokens again.';

export const ENCRYPTION_UNAVAILABLE =
  "Tokens cannot be saved: the system's encryption service is not available (Electron safeStorage).";

export interface SafeStorageSecretStoreOptions {
  safeStorage?: SafeStorageLike;
  platform?: NodeJS.Platform;
}

interface CipherFile {
  version: 1;
  /** key → base64 of safeStorage.encryptString(value). */
  secrets: Record<string, string>;
}

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0)
    throw new TypeError('A secret key must be a non-empty string.');
}

export class SafeStorageSecretStore implements SecretStore {
  readonly kind: 'os-keychain' | 'basic_text';
  /** Shown in Settings (CoreApiOptions.secretsWarning) when the protection is weak. */
  readonly warning: string | undefined;
  readonly file: string;
  // TS-private rather than #private: Electronegativity cannot parse #fields in the built JS and
  // would skip this file. Nothing here is plaintext, and toString/toJSON/inspect show no entries.
  /** Ciphertexts only; values are decrypted on demand and never cached. */
  private ciphers: ReadonlyMap<string, string>;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly storage: SafeStorageLike;
  private ready = false;

  private constructor(
    file: string,
    ciphers: Map<string, string>,
    storage: SafeStorageLike,
    platform: NodeJS.Platform,
    setAside?: string,
  ) {
    this.file = file;
    this.ciphers = ciphers;
    this.storage = storage;
    const weak = platform === 'linux' && storage.getSelectedStorageBackend?.() === 'basic_text';
    // Without this, Electron reports no encryption at all on basic_text (even though Settings
    // would only warn), and every token the user enters would be refused.
    if (weak) storage.setUsePlainTextEncryption?.(true);
    this.kind = weak ? 'basic_text' : 'os-keychain';
    const warnings = [weak ? WEAK_PROTECTION_WARNING : undefined, setAside].filter(Boolean);
    this.warning = warnings.length > 0 ? warnings.join(' ') : undefined;
  }

  /**
   * Asked per call until it says yes: a keyring locked at start may be unlocked later, while a
   * "yes" stays true for the process (Electron initialises its encryptor once).
   */
  private async available(): Promise<boolean> {
    if (this.ready) return true;
    try {
      this.ready = await this.storage.isAsyncEncryptionAvailable();
    } catch {
      this.ready = false;
    }
    return this.ready;
  }

  /** Call after the app is ready: safeStorage cannot tell its backend before. */
  static async open(
    file: string,
    {
      safeStorage: storage = safeStorage,
      platform = process.platform,
    }: SafeStorageSecretStoreOptions = {},
  ): Promise<SafeStorageSecretStore> {
    let read: BoundedText;
    try {
      // Bounded like every file of the agent's own: a huge one must not stop the app starting.
      read = await readBoundedText(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        return new SafeStorageSecretStore(file, new Map(), storage, platform);
      throw new Error(`Cannot read the secrets file ${file} (${errorText(err)}).`, {
        cause: err,
      });
    }
    const ciphers = 'text' in read ? parseCiphers(read.text) : undefined;
    if (ciphers) return new SafeStorageSecretStore(file, ciphers, storage, platform);
    // Damaged, too large, or written by a newer version: set aside, never silently replaced by
    // the next save (a downgrade would lose every token), and the user is told where it went.
    let keptAs: string;
    try {
      keptAs = await keepAside(file, Date.now());
    } catch (err) {
      throw new Error(
        `The secrets file ${file} cannot be read and could not be copied aside (${errorText(err)}).`,
        { cause: err },
      );
    }
    return new SafeStorageSecretStore(
      file,
      new Map(),
      storage,
      platform,
      `The secrets file ${file} could not be read (damaged, too large, or from a newer version), so saved tokens must be entered again; the old file is kept as ${keptAs}.`,
    );
  }

  async get(key: string): Promise<string | undefined> {
    checkKey(key);
    const cipher = this.ciphers.get(key);
    if (cipher === undefined) return undefined;
    if (!(await this.available())) return undefined;
    let opened: { shouldReEncrypt: boolean; result: string };
    try {
      opened = await this.storage.decryptStringAsync(Buffer.from(cipher, 'base64'));
    } catch {
      // Encrypted under another key (a reset keyring, a copied profile) or the keyring is locked
      // for now: as good as absent, and the ciphertext stays for a later try.
      return undefined;
    }
    if (opened.shouldReEncrypt) await this.reEncrypt(key, cipher, opened.result);
    return opened.result;
  }

  /**
   * Whether a ciphertext is kept under `key`, whether or not it can be decrypted now: `get`
   * answers undefined for both a missing value and one the keyring will not open at the moment
   * (locked, or encryption unavailable), and a caller that would otherwise make a new value must
   * not save it over one that is only out of reach for now.
   */
  async has(key: string): Promise<boolean> {
    checkKey(key);
    return this.ciphers.has(key);
  }

  /**
   * Save a token again under the key safeStorage now prefers (a keyring that appeared, a rotated
   * key). Best effort: a failure leaves the old ciphertext, which still decrypts, for a later read.
   */
  private async reEncrypt(key: string, cipher: string, value: string): Promise<void> {
    try {
      const fresh = (await this.storage.encryptStringAsync(value)).toString('base64');
      // Only if nobody saved a new token for this key meanwhile.
      await this.change((next) => {
        if (next.get(key) === cipher) next.set(key, fresh);
      });
    } catch {
      // Kept as it was.
    }
  }

  async set(key: string, value: string): Promise<void> {
    checkKey(key);
    if (typeof value !== 'string') throw new TypeError('A secret value must be a string.');
    if (!(await this.available())) throw new Error(ENCRYPTION_UNAVAILABLE);
    let cipher: string;
    try {
      cipher = (await this.storage.encryptStringAsync(value)).toString('base64');
    } catch (err) {
      // The message of an encryption failure is about the service, never the value.
      throw new Error(`Could not encrypt the token (${errorText(err)}).`, { cause: err });
    }
    return this.change((next) => next.set(key, cipher));
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    if (!this.ciphers.has(key)) return;
    return this.change((next) => next.delete(key));
  }

  /** Serialized copy-on-write: memory adopts the new map only once the file holds it. */
  change(edit: (next: Map<string, string>) => void): Promise<void> {
    const run = async (): Promise<void> => {
      const next = new Map(this.ciphers);
      edit(next);
      const body: CipherFile = { version: 1, secrets: Object.fromEntries(next) };
      try {
        await writeFileAtomic(this.file, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
      } catch (err) {
        throw new Error(`Could not save the secrets file ${this.file} (${errorText(err)}).`, {
          cause: err,
        });
      }
      this.ciphers = next;
    };
    const result = this.queue.then(run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  toString(): string {
    const n = this.ciphers.size;
    return `SecretStore(${this.kind} ${this.file}, ${n} key${n === 1 ? '' : 's'})`;
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

function parseCiphers(text: string): Map<string, string> | undefined {
  let data: unknown;
  try {
    // A file re-saved by an editor may start with a byte order mark.
    data = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return undefined;
  }
  if (typeof data !== 'object' || data === null) return undefined;
  const { version, secrets } = data as Partial<CipherFile>;
  if (version !== 1 || typeof secrets !== 'object' || secrets === null || Array.isArray(secrets))
    return undefined;
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(secrets))
    if (key && typeof value === 'string') out.set(key, value);
  return out;
}
