/**
 * Settings: the folders file services may read, list, search and write in (a text field each;
 * Electron adds a folder picker),
 * the prompt timeout, language and theme (applied at once), where data and logs live, and where
 * secrets are kept (with the host's warning when that is weak), and how to use this agent's
 * services from other MCP apps.
 */
import { type FormEvent, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { SettingsPatch, SettingsView } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { PageHeader } from '../../components/PageHeader.js';
import { SecretsPlaceText } from '../../components/SecretsNote.js';
import { applyLanguage } from '../../i18n/index.js';
import { formatBytes } from '../../lib/format.js';
import { applyTheme } from '../../lib/theme.js';
import { useAction } from '../../lib/useAction.js';
import { useSettings } from '../../store/settings.js';
import { toast } from '../../store/toasts.js';
import { VoiceSettings } from '../voice/VoiceSettings.js';
import { McpClientsSection } from './McpClientsSection.js';
import { McpHttpSection } from './McpHttpSection.js';

function FolderSettings({ settings }: { settings: SettingsView }) {
  const { t } = useTranslation();
  const id = useId();
  const [roots, setRoots] = useState<string[]>(settings.filesRoots);
  const [timeout, setTimeoutSec] = useState(String(settings.promptTimeoutSec));
  const { busy, run } = useAction();
  const picker = settings.host === 'electron' ? window.agent?.pickFolder : undefined;

  // A change from elsewhere (another window) replaces what is shown here.
  useEffect(() => setRoots(settings.filesRoots), [settings.filesRoots]);
  useEffect(() => setTimeoutSec(String(settings.promptTimeoutSec)), [settings.promptTimeoutSec]);

  const timeoutN = Number(timeout);
  const timeoutOk = Number.isInteger(timeoutN) && timeoutN >= 5 && timeoutN <= 3600;
  const cleaned = roots.map((r) => r.trim()).filter(Boolean);
  const dirty =
    JSON.stringify(cleaned) !== JSON.stringify(settings.filesRoots) ||
    timeoutN !== settings.promptTimeoutSec;

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!timeoutOk) return;
    const patch: SettingsPatch = { filesRoots: cleaned, promptTimeoutSec: timeoutN };
    const saved = await run(() => bridge().invoke('saveSettings', patch));
    if (saved) {
      useSettings.getState().replace(saved);
      toast('success', t('settings.saved'));
    }
  }

  async function choose(i: number) {
    if (!picker) return;
    try {
      const folder = await picker();
      if (folder) setRoots((old) => old.map((r, j) => (j === i ? folder : r)));
    } catch {
      // The user closed the picker.
    }
  }

  return (
    <form className="card settings-section" onSubmit={submit} aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>{t('settings.permissions')}</h2>
      <fieldset>
        <legend>{t('settings.roots')}</legend>
        <p className="help" id={`${id}-roots-help`}>
          {t('settings.rootsHelp')}
        </p>
        <ul className="roots">
          {roots.map((root, i) => (
            <li key={i} className="root-row">
              <label className="sr-only" htmlFor={`${id}-root-${i}`}>
                {t('settings.root', { n: i + 1 })}
              </label>
              <input
                id={`${id}-root-${i}`}
                type="text"
                className="mono"
                value={root}
                maxLength={4096}
                spellCheck={false}
                autoComplete="off"
                aria-describedby={`${id}-roots-help`}
                onChange={(e) =>
                  setRoots((old) => old.map((r, j) => (j === i ? e.target.value : r)))
                }
                data-testid={`settings-root-${i}`}
              />
              {picker && (
                <button
                  type="button"
                  className="button button-small"
                  onClick={() => void choose(i)}
                  data-testid={`settings-root-choose-${i}`}
                >
                  {t('settings.choose')}
                </button>
              )}
              <button
                type="button"
                className="button button-small button-danger-quiet"
                aria-label={t('settings.removeRoot', { n: i + 1 })}
                onClick={() => setRoots((old) => old.filter((_, j) => j !== i))}
                data-testid={`settings-root-remove-${i}`}
              >
                {t('common.remove')}
              </button>
            </li>
          ))}
        </ul>
        <button
          type="button"
          className="button button-small"
          disabled={roots.length >= 20}
          onClick={() => setRoots((old) => [...old, ''])}
          data-testid="settings-add-root"
        >
          {t('settings.addRoot')}
        </button>
        <p className="help">
          {t('settings.maxFile', { size: formatBytes(settings.maxFileBytes) })}
        </p>
      </fieldset>
      <div className="field">
        <label htmlFor={`${id}-timeout`}>{t('settings.timeout')}</label>
        <input
          id={`${id}-timeout`}
          type="number"
          min={5}
          max={3600}
          step={1}
          className="input-narrow"
          value={timeout}
          aria-invalid={!timeoutOk || undefined}
          aria-describedby={
            timeoutOk ? `${id}-timeout-help` : `${id}-timeout-err ${id}-timeout-help`
          }
          onChange={(e) => setTimeoutSec(e.target.value)}
          data-testid="settings-timeout"
        />
        {!timeoutOk && (
          <p className="field-error" id={`${id}-timeout-err`} data-testid="settings-timeout-error">
            {t('settings.timeoutInvalid')}
          </p>
        )}
        <p className="help" id={`${id}-timeout-help`}>
          {t('settings.timeoutHelp')}
        </p>
      </div>
      <div className="form-actions">
        <span className="spacer" />
        <button
          type="submit"
          className="button button-primary"
          disabled={busy || !dirty || !timeoutOk}
          data-testid="settings-save"
        >
          {busy ? t('common.saving') : t('common.save')}
        </button>
      </div>
    </form>
  );
}

function Appearance({ settings }: { settings: SettingsView }) {
  const { t } = useTranslation();
  const id = useId();
  const { run } = useAction();

  function save(patch: SettingsPatch) {
    // Applied here at once; the core's answer (and the settings event) confirms it.
    if (patch.language) applyLanguage(patch.language);
    if (patch.theme) applyTheme(patch.theme);
    useSettings.getState().replace({ ...settings, ...patch });
    void run(() => bridge().invoke('saveSettings', patch)).then((saved) => {
      if (saved) useSettings.getState().replace(saved);
      else useSettings.getState().replace(settings);
    });
  }

  return (
    <section className="card settings-section" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>{t('settings.appearance')}</h2>
      <div className="form-grid">
        <div className="field">
          <label htmlFor={`${id}-lang`}>{t('settings.language')}</label>
          <select
            id={`${id}-lang`}
            value={settings.language}
            onChange={(e) => save({ language: e.target.value as SettingsView['language'] })}
            data-testid="settings-language"
          >
            <option value="en" lang="en">
              English
            </option>
            <option value="zh-CN" lang="zh-CN">
              简体中文
            </option>
          </select>
        </div>
        <fieldset className="field">
          <legend>{t('settings.theme')}</legend>
          <div className="segmented">
            {(['system', 'light', 'dark'] as const).map((theme) => (
              <label key={theme} className="segment">
                <input
                  type="radio"
                  name={`${id}-theme`}
                  value={theme}
                  checked={settings.theme === theme}
                  onChange={() => save({ theme })}
                  data-testid={`settings-theme-${theme}`}
                />
                <span>
                  {t(
                    theme === 'system'
                      ? 'settings.themeSystem'
                      : theme === 'light'
                        ? 'settings.themeLight'
                        : 'settings.themeDark',
                  )}
                </span>
              </label>
            ))}
          </div>
        </fieldset>
      </div>
    </section>
  );
}

function Storage({ settings }: { settings: SettingsView }) {
  const { t } = useTranslation();
  const id = useId();
  return (
    <section className="card settings-section" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>{t('settings.storage')}</h2>
      <div className="field">
        <label htmlFor={`${id}-data`}>{t('settings.dataDir')}</label>
        <input
          id={`${id}-data`}
          className="mono"
          readOnly
          value={settings.dataDir}
          onFocus={(e) => e.target.select()}
          data-testid="settings-data-dir"
        />
      </div>
      {settings.logDir && (
        <div className="field">
          <label htmlFor={`${id}-log`}>{t('settings.logDir')}</label>
          <input
            id={`${id}-log`}
            className="mono"
            readOnly
            value={settings.logDir}
            onFocus={(e) => e.target.select()}
            data-testid="settings-log-dir"
          />
        </div>
      )}
      <div className="field">
        <span className="field-label">{t('settings.secrets')}</span>
        <p>
          <span data-testid="settings-secrets" data-kind={settings.secrets.kind}>
            <SecretsPlaceText />
          </span>
        </p>
        {settings.secrets.warning && (
          <p className="warning" role="note" data-testid="settings-secrets-warning">
            {settings.secrets.warning}
          </p>
        )}
      </div>
    </section>
  );
}

export function SettingsPage() {
  const { t } = useTranslation();
  const settings = useSettings((s) => s.settings);
  if (!settings) return null;
  return (
    <div className="page page-scroll">
      <PageHeader title={t('settings.title')} />
      <div className="settings">
        <Appearance settings={settings} />
        <FolderSettings settings={settings} />
        <VoiceSettings />
        <McpHttpSection settings={settings} />
        <Storage settings={settings} />
        <McpClientsSection />
      </div>
    </div>
  );
}
