import { systemClock, type Clock } from '../clock.js';
import type { AgentNotice, NoticeWords } from '../contract/notice.js';
import { Emitter, type Listener } from '../events.js';
import { cryptoIds, type IdSource } from '../ids.js';
import {
  errorText,
  keepAside,
  readBoundedText,
  type BoundedText,
  writeFileAtomic,
} from './atomic.js';
import type { Settings } from './schema.js';
import { type ProfileChecker, type SettingsCheck, validateSettings } from './validate.js';

export interface SettingsStoreOptions {
  /** Names the `.corrupt-<timestamp>` copy of a bad file. */
  clock?: Clock;
  /** Names temp files. */
  ids?: IdSource;
  /**
   * Whether a saved connection profile is valid for its kind (the agent's kinds). Without it, the
   * kinds the app ships are checked.
   */
  checkProfile?: ProfileChecker;
}

type SettingsEvents = { changed: Settings };

/**
 * The settings file: loaded once, validated against the one schema, saved atomically. Memory and
 * disk agree after every settled update: a value is only adopted once it is on disk, so a failed
 * write leaves the app running on what the file says.
 */
export class SettingsStore {
  readonly file: string;
  /**
   * One notice per problem met on open (a corrupt file set aside): its English sentence and the
   * words a window translates. The host shows them.
   */
  readonly warnings: readonly AgentNotice[];
  #current: Settings;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #events = new Emitter<SettingsEvents>();
  readonly #ids: IdSource;

  readonly #validate: (value: unknown) => SettingsCheck;

  private constructor(
    file: string,
    current: Settings,
    warnings: AgentNotice[],
    ids: IdSource,
    validate: (value: unknown) => SettingsCheck,
  ) {
    this.file = file;
    this.#current = deepFreeze(current);
    this.warnings = Object.freeze(warnings);
    this.#ids = ids;
    this.#validate = validate;
  }

  /**
   * A missing file means first run: defaults, written on the first save. A file that is not JSON or
   * not valid is moved aside (never deleted: it may hold the user's only copy of a profile) and
   * defaults are used, with a warning. A file that exists but cannot be read is an error: guessing
   * would overwrite it on the next save.
   */
  static async open(
    file: string,
    defaults: Settings,
    { clock = systemClock, ids = cryptoIds, checkProfile }: SettingsStoreOptions = {},
  ): Promise<SettingsStore> {
    const validate = (value: unknown) => validateSettings(value, checkProfile);
    const checkedDefaults = validate(structuredClone(defaults));
    if (!checkedDefaults.ok)
      throw new Error(`Default settings are invalid: ${checkedDefaults.message}.`);
    const fresh = (warnings: AgentNotice[] = []): SettingsStore =>
      new SettingsStore(file, structuredClone(checkedDefaults.value), warnings, ids, validate);

    let read: BoundedText;
    try {
      read = await readBoundedText(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return fresh();
      throw new Error(`Cannot read the settings file ${file} (${errorText(err)}).`, { cause: err });
    }

    let problem: string;
    // What the notice's words say of it, once the copy's name is known.
    let words: (keptAs: string) => NoticeWords;
    if ('tooLarge' in read) {
      const bytes = read.tooLarge;
      problem = `is too large to be settings (${bytes} bytes)`;
      words = (keptAs) => ({ key: 'notice.settingsTooLarge', params: { file, bytes, keptAs } });
    } else
      try {
        // A BOM is what Notepad leaves behind; it is not a reason to throw the user's settings away.
        const parsed: unknown = JSON.parse(read.text.replace(/^\uFEFF/, ''));
        const checked = validate(parsed);
        if (checked.ok) return new SettingsStore(file, checked.value, [], ids, validate);
        const reason = checked.message;
        problem = `is not valid (${reason})`;
        words = (keptAs) => ({ key: 'notice.settingsInvalid', params: { file, reason, keptAs } });
      } catch (err) {
        const reason = errorText(err);
        problem = `is not readable JSON (${reason})`;
        words = (keptAs) => ({ key: 'notice.settingsNotJson', params: { file, reason, keptAs } });
      }
    let keptAs: string;
    try {
      keptAs = await keepAside(file, clock.now());
    } catch (err) {
      throw new Error(
        `The settings file ${file} ${problem} and could not be copied aside (${errorText(err)}); fix or move it by hand.`,
        { cause: err },
      );
    }
    return fresh([
      {
        message: `The settings file ${file} ${problem}, so default settings are in use; the old file is kept as ${keptAs}.`,
        words: words(keptAs),
      },
    ]);
  }

  /** The current settings, deeply frozen: change them only through update(). */
  get(): Settings {
    return this.#current;
  }

  on<K extends keyof SettingsEvents>(event: K, listener: Listener<SettingsEvents[K]>): () => void {
    return this.#events.on(event, listener);
  }

  /**
   * Apply `mutator` to a private copy, validate, write, then adopt. Updates run one at a time, each
   * on the result of the previous one, so two concurrent updates both land. On any failure (the
   * mutator throws, the result is invalid, the disk refuses) the promise rejects with a clear
   * message and the settings stay as they were.
   */
  update(mutator: (draft: Settings) => void | Promise<void>): Promise<Settings> {
    const run = async (): Promise<Settings> => {
      const draft = structuredClone(this.#current) as Settings;
      await mutator(draft);
      // Validate exactly what will be on disk: JSON drops undefined keys and turns NaN into null.
      const text = `${JSON.stringify(draft, null, 2)}\n`;
      const checked = this.#validate(JSON.parse(text));
      if (!checked.ok) throw new Error(`Settings not saved: ${checked.message}.`);
      try {
        await writeFileAtomic(this.file, text, { ids: this.#ids });
      } catch (err) {
        throw new Error(
          `Could not save settings to ${this.file} (${errorText(err)}); the previous settings stay in effect.`,
          { cause: err },
        );
      }
      this.#current = deepFreeze(checked.value);
      this.#events.emit('changed', this.#current);
      return this.#current;
    };
    const result = this.#queue.then(run);
    // The chain must survive a failed update, or every later update would fail with it.
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every update queued so far has settled. */
  async flush(): Promise<void> {
    await this.#queue;
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
