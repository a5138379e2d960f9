/**
 * Add or edit an Advent profile. The token is a password field sent only through setSecret after
 * the profile is saved, and never shown back ("token saved" when the core has one).
 */
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ProfileInput, ProfileView } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { errorText } from '../../lib/labels.js';
import { toast } from '../../store/toasts.js';

type Format = '' | 'pcm' | 'opus';
type Mode = '' | 'manual' | 'vad' | 'auto';

interface Draft {
  name: string;
  host: string;
  port: string;
  token: string;
  voiceId: string;
  lang: string;
  format: Format;
  inputAudioFormat: Format;
  mode: Mode;
  emojiMode: string;
  autoConnect: boolean;
}

type Problem = Partial<Record<keyof Draft, string>>;

function draftOf(p: ProfileView | undefined): Draft {
  return {
    name: p?.name ?? '',
    host: p?.host ?? '',
    port: p ? String(p.port) : '',
    token: '',
    voiceId: p?.voiceId ?? '',
    lang: p?.lang ?? '',
    format: p?.format ?? '',
    inputAudioFormat: p?.inputAudioFormat ?? '',
    mode: p?.mode ?? '',
    emojiMode: p?.emojiMode ?? '',
    autoConnect: p?.autoConnect ?? false,
  };
}

const LOGIN_VALUE = /^(?!.*##)[^\r\n]*$/;

export function ProfileForm({
  profile,
  onDone,
}: {
  profile: ProfileView | undefined;
  onDone: () => void;
}) {
  const { t } = useTranslation();
  const id = useId();
  const [draft, setDraft] = useState<Draft>(() => draftOf(profile));
  const [problems, setProblems] = useState<Problem>({});
  const [saving, setSaving] = useState(false);
  const firstRef = useRef<HTMLInputElement>(null);
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setDraft((d) => ({ ...d, [k]: v }));

  useEffect(() => {
    firstRef.current?.focus();
  }, []);

  function validate(): Problem {
    const p: Problem = {};
    if (!draft.name.trim()) p.name = t('connections.nameRequired');
    if (!/^[^\s/]+$/.test(draft.host.trim()) || draft.host.trim().length > 255)
      p.host = t('connections.hostInvalid');
    const port = Number(draft.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) p.port = t('connections.portInvalid');
    for (const k of ['voiceId', 'lang', 'emojiMode'] as const)
      if (!LOGIN_VALUE.test(draft[k]) || draft[k].length > 200) p[k] = t('connections.noHashes');
    return p;
  }

  async function submit(e: FormEvent, connectAfter: boolean) {
    e.preventDefault();
    const found = validate();
    setProblems(found);
    const firstBad = Object.keys(found)[0];
    if (firstBad) {
      document.getElementById(`${id}-${firstBad}`)?.focus();
      return;
    }
    const input: ProfileInput = {
      kind: 'advent',
      name: draft.name.trim().slice(0, 100),
      host: draft.host.trim(),
      port: Number(draft.port),
      autoConnect: draft.autoConnect,
    };
    if (profile) input.id = profile.id;
    if (draft.voiceId.trim()) input.voiceId = draft.voiceId.trim();
    if (draft.lang.trim()) input.lang = draft.lang.trim();
    if (draft.emojiMode.trim()) input.emojiMode = draft.emojiMode.trim();
    if (draft.format) input.format = draft.format;
    if (draft.inputAudioFormat) input.inputAudioFormat = draft.inputAudioFormat;
    if (draft.mode) input.mode = draft.mode;

    setSaving(true);
    try {
      const saved = await bridge().invoke('saveConnection', input);
      const token = draft.token.trim();
      if (token) await bridge().invoke('setSecret', saved.id, token);
      setDraft((d) => ({ ...d, token: '' }));
      toast('success', t('connections.saved', { name: saved.name }));
      if (connectAfter) await bridge().invoke('connect', saved.id);
      onDone();
    } catch (err) {
      toast('error', errorText(t, err));
    } finally {
      setSaving(false);
    }
  }

  const text = (
    k: 'name' | 'host' | 'port' | 'voiceId' | 'lang' | 'emojiMode',
    label: string,
    extra: { placeholder?: string; required?: boolean; inputMode?: 'numeric'; max?: number } = {},
  ) => {
    const problem = problems[k];
    return (
      <div className="field">
        <label htmlFor={`${id}-${k}`}>
          {label}
          {extra.required && (
            <span className="required" aria-hidden="true">
              {' '}
              *
            </span>
          )}
        </label>
        <input
          id={`${id}-${k}`}
          ref={k === 'name' ? firstRef : undefined}
          type="text"
          value={draft[k]}
          required={extra.required}
          placeholder={extra.placeholder}
          inputMode={extra.inputMode}
          maxLength={extra.max ?? 200}
          autoComplete="off"
          spellCheck={false}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? `${id}-${k}-err` : undefined}
          onChange={(e) => set(k, e.target.value)}
          data-testid={`profile-${k}`}
        />
        {problem && (
          <p className="field-error" id={`${id}-${k}-err`}>
            {problem}
          </p>
        )}
      </div>
    );
  };

  const choice = (
    k: 'format' | 'inputAudioFormat' | 'mode',
    label: string,
    options: { value: string; label: string }[],
  ) => (
    <div className="field">
      <label htmlFor={`${id}-${k}`}>{label}</label>
      <select
        id={`${id}-${k}`}
        value={draft[k]}
        onChange={(e) => set(k, e.target.value as never)}
        data-testid={`profile-${k}`}
      >
        <option value="">{t('connections.serverDefault')}</option>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );

  const formats = [
    { value: 'pcm', label: 'PCM' },
    { value: 'opus', label: 'Opus' },
  ];

  return (
    <form
      className="card profile-form"
      aria-labelledby={`${id}-title`}
      onSubmit={(e) => void submit(e, false)}
      noValidate
      data-testid="profile-form"
    >
      <h2 id={`${id}-title`}>
        {profile ? t('connections.editTitle', { name: profile.name }) : t('connections.newTitle')}
      </h2>
      <fieldset>
        <legend>{t('connections.basics')}</legend>
        <div className="form-grid">
          {text('name', t('connections.name'), {
            required: true,
            placeholder: t('connections.namePlaceholder'),
            max: 100,
          })}
          {text('host', t('connections.host'), {
            required: true,
            placeholder: '127.0.0.1',
            max: 255,
          })}
          {text('port', t('connections.port'), {
            required: true,
            inputMode: 'numeric',
            placeholder: '8009',
            max: 5,
          })}
        </div>
      </fieldset>
      <fieldset>
        <legend>{t('connections.login')}</legend>
        <div className="field">
          <label htmlFor={`${id}-token`}>
            {t('connections.token')}
            {profile?.hasToken && (
              <span className="badge badge-good token-saved" data-testid="profile-token-saved">
                {t('connections.tokenSaved')}
              </span>
            )}
          </label>
          <input
            id={`${id}-token`}
            type="password"
            value={draft.token}
            maxLength={16384}
            autoComplete="new-password"
            spellCheck={false}
            aria-describedby={`${id}-token-help`}
            onChange={(e) => set('token', e.target.value)}
            data-testid="profile-token"
          />
          <p className="help" id={`${id}-token-help`}>
            {profile?.hasToken ? t('connections.tokenHelpSaved') : t('connections.tokenHelpNew')}
          </p>
          {profile?.hasToken && (
            <button
              type="button"
              className="link-button"
              onClick={() =>
                void bridge()
                  .invoke('setSecret', profile.id, '')
                  .then(
                    () => toast('info', t('connections.tokenForgotten')),
                    (err: unknown) => toast('error', errorText(t, err)),
                  )
              }
              data-testid="profile-forget-token"
            >
              {t('connections.forgetToken')}
            </button>
          )}
        </div>
        <div className="form-grid">
          {text('voiceId', t('connections.voiceId'))}
          {text('lang', t('connections.lang'), { placeholder: t('connections.langPlaceholder') })}
          {text('emojiMode', t('connections.emojiMode'))}
        </div>
      </fieldset>
      <fieldset>
        <legend>{t('connections.audio')}</legend>
        <div className="form-grid">
          {choice('format', t('connections.format'), formats)}
          {choice('inputAudioFormat', t('connections.inputAudioFormat'), formats)}
          {choice('mode', t('connections.mode'), [
            { value: 'manual', label: t('connections.modeManual') },
            { value: 'vad', label: t('connections.modeVad') },
            { value: 'auto', label: t('connections.modeAuto') },
          ])}
        </div>
        <label className="check-label">
          <input
            type="checkbox"
            checked={draft.autoConnect}
            onChange={(e) => set('autoConnect', e.target.checked)}
            data-testid="profile-autoConnect"
          />
          <span>{t('connections.autoConnect')}</span>
        </label>
      </fieldset>
      <div className="form-actions">
        <button type="button" className="button" onClick={onDone} disabled={saving}>
          {t('common.cancel')}
        </button>
        <span className="spacer" />
        <button
          type="button"
          className="button"
          disabled={saving}
          onClick={(e) => void submit(e, true)}
          data-testid="profile-save-connect"
        >
          {t('connections.saveConnect')}
        </button>
        <button
          type="submit"
          className="button button-primary"
          disabled={saving}
          data-testid="profile-save"
        >
          {saving ? t('common.saving') : t('common.save')}
        </button>
      </div>
    </form>
  );
}
