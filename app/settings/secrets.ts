import { chmod, stat } from 'node:fs/promises';
import { inspect } from 'node:util';
import { systemClock, type Clock } from '../clock.js';
import { cryptoIds, type IdSource } from '../ids.js';
import {
  errorText,
  keepAside,
  readBoundedText,
  type BoundedText,
  writeFileAtomic,
} from './atomic.js';

/**
 * Where tokens live (never in settings.json). Electron backs it with safeStorage; the terminal host
 * with a private file. Implementations must never put a value in a message, a log line or their
 * own printed form.
 */
export interface SecretStore {
  /**
   * The value, or undefined when there is none, or (a store that encrypts) when it cannot be
   * read now: `has` tells those apart.
   */
  get(key: string): Promise<string | undefined>;
  /**
   * Whether a value is stored under `key`, readable now or not (a locked keyring). A store whose
   * `get` always reads what it holds may leave it out: undefined from `get` then means absent.
   */
  has?(key: string): Promise<boolean>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  /** What backs it ('file', 'memory', 'safeStorage'…), shown so the user knows how tokens are kept. */
  readonly kind: string;
}

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0)
    throw new TypeError('A secret key must be a non-empty string.');
}

function checkValue(value: unknown): asserts value is string {
  // The message deliberately says nothing about the value itself.
  if (typeof value !== 'string') throw new TypeError('A secret value must be a string.');
}

/** Shared by both stores: how a secret store looks when printed — its keys' count, never values. */
function describe(kind: string, count: number, where?: string): string {
  return `SecretStore(${kind}${where ? ` ${where}` : ''}, ${count} key${count === 1 ? '' : 's'})`;
}

/** For tests and for hosts that must not persist anything. */
export class MemorySecretStore implements SecretStore {
  readonly kind = 'memory';
  // A private field: util.inspect and JSON.stringify cannot see it.
  readonly #values = new Map<string, string>();

  async get(key: string): Promise<string | undefined> {
    checkKey(key);
    return this.#values.get(key);
  }

  async has(key: string): Promise<boolean> {
    checkKey(key);
    return this.#values.has(key);
  }

  async set(key: string, value: string): Promise<void> {
    checkKey(key);
    checkValue(value);
    this.#values.set(key, value);
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    this.#values.delete(key);
  }

  toString(): string {
    return describe(this.kind, this.#values.size);
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

export interface FileSecretStoreOptions {
  /** Mode bits mean nothing on Windows (ACLs protect the profile folder), so no check there. */
  platform?: NodeJS.Platform;
  clock?: Clock;
  ids?: IdSource;
}

interface SecretsFile {
  version: 1;
  secrets: Record<string, string>;
}

/**
 * Secrets for the terminal host: one JSON file, mode 0600 in a 0700 directory, replaced atomically.
 * This protects against other users on the machine, not against the user's own processes — the
 * same bar as ~/.ssh or ~/.netrc, and stated as such by `kind`.
 */
export class FileSecretStore implements SecretStore {
  readonly kind = 'file';
  readonly file: string;
  /** Problems met on open (loose permissions fixed, a damaged file set aside). Never contain values. */
  readonly warnings: readonly string[];
  #values: ReadonlyMap<string, string>;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #ids: IdSource;

  private constructor(
    file: string,
    values: Map<string, string>,
    warnings: string[],
    ids: IdSource,
  ) {
    this.file = file;
    this.#values = values;
    this.warnings = Object.freeze(warnings);
    this.#ids = ids;
  }

  static async open(
    file: string,
    {
      platform = process.platform,
      clock = systemClock,
      ids = cryptoIds,
    }: FileSecretStoreOptions = {},
  ): Promise<FileSecretStore> {
    const warnings: string[] = [];
    let mode: number;
    try {
      mode = (await stat(file)).mode;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        return new FileSecretStore(file, new Map(), [], ids);
      throw new Error(`Cannot read the secrets file ${file} (${errorText(err)}).`, { cause: err });
    }
    if (platform !== 'win32' && (mode & 0o077) !== 0) {
      // Tighten before reading, so the values are exposed for no longer than they already were.
      try {
        await chmod(file, 0o600);
      } catch (err) {
        throw new Error(
          `The secrets file ${file} is accessible to other users and could not be made private (${errorText(err)}).`,
          { cause: err },
        );
      }
      warnings.push(
        `The secrets file ${file} was accessible to other users (mode ${(mode & 0o777).toString(8).padStart(3, '0')}); it is now 0600, but consider changing the tokens it holds.`,
      );
    }

    let read: BoundedText;
    try {
      read = await readBoundedText(file);
    } catch (err) {
      throw new Error(`Cannot read the secrets file ${file} (${errorText(err)}).`, { cause: err });
    }
    const values = 'text' in read ? parseSecrets(read.text) : undefined;
    if (values) return new FileSecretStore(file, values, warnings, ids);

    let keptAs: string;
    try {
      // The copy may still hold tokens: keepAside gives it mode 0600 too.
      keptAs = await keepAside(file, clock.now());
    } catch (err) {
      throw new Error(
        `The secrets file ${file} is damaged and could not be copied aside (${errorText(err)}).`,
        {
          cause: err,
        },
      );
    }
    warnings.push(
      `The secrets file ${file} is damaged, so saved tokens must be entered again; the old file is kept as ${keptAs}.`,
    );
    return new FileSecretStore(file, new Map(), warnings, ids);
  }

  async get(key: string): Promise<string | undefined> {
    checkKey(key);
    // Writes in flight are visible only once on disk, like the settings store.
    return this.#values.get(key);
  }

  async has(key: string): Promise<boolean> {
    checkKey(key);
    return this.#values.has(key);
  }

  // async, so a bad argument rejects like every other failure instead of throwing synchronously.
  async set(key: string, value: string): Promise<void> {
    checkKey(key);
    checkValue(value);
    return this.#change((next) => next.set(key, value));
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    return this.#change((next) => next.delete(key));
  }

  /** Serialized copy-on-write: memory adopts the new map only after the file holds it. */
  #change(edit: (next: Map<string, string>) => void): Promise<void> {
    const run = async (): Promise<void> => {
      const next = new Map(this.#values);
      edit(next);
      const body: SecretsFile = { version: 1, secrets: Object.fromEntries(next) };
      try {
        await writeFileAtomic(this.file, `${JSON.stringify(body, null, 2)}\n`, { ids: this.#ids });
      } catch (err) {
        throw new Error(`Could not save the secrets file ${this.file} (${errorText(err)}).`, {
          cause: err,
        });
      }
      this.#values = next;
    };
    const result = this.#queue.then(run);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  toString(): string {
    return describe(this.kind, this.#values.size, this.file);
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/** undefined when the text is not a secrets file. No parser message is kept: it may quote a token. */
function parseSecrets(text: string): Map<string, string> | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return undefined;
  }
  if (typeof data !== 'object' || data === null) return undefined;
  const { version, secrets } = data as Partial<SecretsFile>;
  if (version !== 1 || typeof secrets !== 'object' || secrets === null || Array.isArray(secrets))
    return undefined;
  const values = new Map<string, string>();
  for (const [key, value] of Object.entries(secrets)) {
    if (key.length === 0 || typeof value !== 'string') return undefined;
    values.set(key, value);
  }
  return values;
}
