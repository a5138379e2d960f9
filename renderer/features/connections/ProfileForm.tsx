/**
 * Add or edit a connection of any kind the agent holds. The form is built from the kind's spec
 * (app/contract/profiles, sent in the snapshot): its fields, sections, checks and words, so a new
 * kind needs no change here. The token is a password field sent with the profile and never shown
 * back ("token saved" when the core has one); a kind that cannot connect without one is not saved
 * without one. An address that carries its token (`?token=…`) is split by the core on save.
 */
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  FORM_SECTIONS,
  type FieldSpec,
  type FormSection,
  type ProfileInput,
  type ProfileKindView,
  type ProfileView,
  fieldAccepts,
  textIn,
  urlHasToken,
} from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { TokenStorageNote } from '../../components/SecretsNote.js';
import { errorText } from '../../lib/labels.js';
import { useConnections } from '../../store/connection.js';
import { toast } from '../../store/toasts.js';

/** What the user typed: text as typed, choices as their string value, checks as booleans. */
type Values = Record<string, string | boolean>;

interface Draft {
  kind: string;
  name: string;
  token: string;
  autoConnect: boolean;
  /** The server's tool limit as typed ('' for none). */
  toolLimit: string;
  values: Values;
}

/** Problems by field key ('name', 'token' or a spec field). */
type Problems = Record<string, string>;

function valuesOf(spec: ProfileKindView | undefined, p: ProfileView | undefined): Values {
  const saved = (p?.kind === spec?.kind ? p : undefined) as Record<string, unknown> | undefined;
  const values: Values = {};
  for (const f of spec?.form ?? []) {
    const v = saved?.[f.key];
    values[f.key] =
      f.input === 'check'
        ? typeof v === 'boolean'
          ? v
          : (f.defaultValue ?? false)
        : v === undefined
          ? ''
          : String(v);
  }
  return values;
}

function draftOf(kinds: ProfileKindView[], p: ProfileView | undefined): Draft {
  const kind = p?.kind ?? kinds[0]?.kind ?? '';
  return {
    kind,
    name: p?.name ?? '',
    token: '',
    autoConnect: p?.autoConnect ?? false,
    toolLimit: p?.toolLimit === undefined ? '' : String(p.toolLimit),
    values: valuesOf(
      kinds.find((k) => k.kind === kind),
      p,
    ),
  };
}

/** A typed value as the profile keeps it; undefined when left empty. */
function valueOf(f: FieldSpec, raw: string | boolean): unknown {
  if (f.input === 'check') return raw;
  const text = String(raw).trim();
  if (!text) return undefined;
  if (f.input === 'number') return Number(text);
  if (f.input === 'choice') return f.choices?.find((c) => String(c.value) === text)?.value ?? text;
  return text;
}

/** The profile the core saves, from the draft of one kind. */
function inputOf(spec: ProfileKindView, d: Draft, id: string | undefined): ProfileInput {
  const out: Record<string, unknown> = {
    kind: spec.kind,
    name: d.name.trim().slice(0, 100),
    autoConnect: d.autoConnect,
  };
  if (id) out.id = id;
  const limit = d.toolLimit.trim();
  if (limit) out.toolLimit = Number(limit);
  for (const f of spec.form) {
    const v = valueOf(f, d.values[f.key] ?? '');
    // A checkbox at its default says nothing: the profile keeps only what the user chose.
    if (v === undefined || (f.input === 'check' && v === (f.defaultValue ?? false))) continue;
    out[f.key] = v;
  }
  return out as ProfileInput;
}

export function ProfileForm({
  profile,
  onDone,
}: {
  profile: ProfileView | undefined;
  onDone: () => void;
}) {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const words = (texts: Parameters<typeof textIn>[0] | undefined) =>
    texts === undefined ? undefined : textIn(texts, lang);
  const id = useId();
  const kinds = useConnections((s) => s.kinds);
  const [draft, setDraft] = useState<Draft>(() => draftOf(kinds, profile));
  const [problems, setProblems] = useState<Problems>({});
  const [saving, setSaving] = useState(false);
  /** Once saved, further saves update that profile: a retry never makes a second one. */
  const [savedId, setSavedId] = useState<string | undefined>(profile?.id);
  const firstRef = useRef<HTMLInputElement>(null);
  const spec = kinds.find((k) => k.kind === draft.kind);
  const secret = spec?.secret;
  const hasToken = profile?.hasToken === true;

  useEffect(() => {
    firstRef.current?.focus();
  }, []);

  const setValue = (key: string, v: string | boolean) =>
    setDraft((d) => ({ ...d, values: { ...d.values, [key]: v } }));
  const setKind = (kind: string) =>
    setDraft((d) => ({
      ...d,
      kind,
      values: valuesOf(
        kinds.find((k) => k.kind === kind),
        undefined,
      ),
    }));

  function validate(): Problems {
    const p: Problems = {};
    if (!draft.name.trim()) p.name = t('connections.nameRequired');
    const limit = draft.toolLimit.trim();
    if (limit && !(/^\d{1,5}$/.test(limit) && Number(limit) >= 1 && Number(limit) <= 10_000))
      p.toolLimit = t('connections.toolLimitInvalid');
    if (!spec) return p;
    for (const f of spec.form) {
      const v = valueOf(f, draft.values[f.key] ?? '');
      if (v === undefined) {
        if (f.required) p[f.key] = words(f.invalid) ?? t('connections.required');
      } else if (!fieldAccepts(spec.fields[f.key]!, v)) {
        p[f.key] = words(f.invalid) ?? t('connections.invalidValue');
      }
    }
    if (secret?.mode === 'url') {
      const url = String(draft.values.url ?? '');
      if (!p.url && !hasToken && !urlHasToken(url)) p.url = t('connections.urlNeedsToken');
    }
    if (secret?.mode === 'required' && !hasToken && !draft.token.trim())
      p.token = t('connections.tokenRequired');
    return p;
  }

  async function submit(e: FormEvent, connectAfter: boolean) {
    e.preventDefault();
    if (saving || !spec) return;
    const found = validate();
    setProblems(found);
    const firstBad = Object.keys(found)[0];
    if (firstBad) {
      document.getElementById(`${id}-${firstBad}`)?.focus();
      return;
    }
    setSaving(true);
    let saved: ProfileView;
    try {
      const token = secret && secret.mode !== 'url' ? draft.token.trim() || undefined : undefined;
      saved = await bridge().invoke('saveConnection', inputOf(spec, draft, savedId), token);
      setSavedId(saved.id);
      setDraft((d) => ({ ...d, token: '' }));
    } catch (err) {
      toast('error', errorText(t, err));
      setSaving(false);
      return;
    }
    toast('success', t('connections.saved', { name: saved.name }));
    // Saved is done: the form closes whatever connecting says (its card shows that).
    onDone();
    if (connectAfter)
      await bridge()
        .invoke('connect', saved.id)
        .catch((err: unknown) => toast('error', errorText(t, err)));
  }

  const describedBy = (key: string, help: boolean) =>
    [problems[key] && `${id}-${key}-err`, help && `${id}-${key}-help`].filter(Boolean).join(' ') ||
    undefined;

  const fieldError = (key: string) =>
    problems[key] && (
      <p className="field-error" id={`${id}-${key}-err`}>
        {problems[key]}
      </p>
    );

  const label = (key: string, text: string, required?: boolean) => (
    <label htmlFor={`${id}-${key}`}>
      {text}
      {required && (
        <span className="required" aria-hidden="true">
          {' '}
          *
        </span>
      )}
    </label>
  );

  const nameField = (
    <div className="field">
      {label('name', t('connections.name'), true)}
      <input
        id={`${id}-name`}
        ref={firstRef}
        type="text"
        value={draft.name}
        required
        placeholder={t('connections.namePlaceholder')}
        maxLength={100}
        autoComplete="off"
        aria-invalid={problems.name ? true : undefined}
        aria-describedby={describedBy('name', false)}
        onChange={(e) => setDraft((d) => ({ ...d, name: e.target.value }))}
        data-testid="profile-name"
      />
      {fieldError('name')}
    </div>
  );

  const field = (f: FieldSpec) => {
    const key = f.key;
    const help = words(f.help);
    if (f.input === 'check')
      return (
        <label className="check-label" key={key}>
          <input
            type="checkbox"
            checked={draft.values[key] === true}
            onChange={(e) => setValue(key, e.target.checked)}
            data-testid={`profile-${key}`}
          />
          <span>{words(f.label)}</span>
        </label>
      );
    if (f.input === 'choice')
      return (
        <div className="field" key={key}>
          {label(key, words(f.label) ?? key, f.required)}
          <select
            id={`${id}-${key}`}
            value={String(draft.values[key] ?? '')}
            aria-invalid={problems[key] ? true : undefined}
            aria-describedby={describedBy(key, Boolean(help))}
            onChange={(e) => setValue(key, e.target.value)}
            data-testid={`profile-${key}`}
          >
            {!f.required && (
              <option value="">{words(f.emptyChoice) ?? t('connections.serverDefault')}</option>
            )}
            {f.choices?.map((c) => (
              <option key={String(c.value)} value={String(c.value)}>
                {words(c.label)}
              </option>
            ))}
          </select>
          {help && (
            <p className="help" id={`${id}-${key}-help`}>
              {help}
            </p>
          )}
          {fieldError(key)}
        </div>
      );
    const schema = spec?.fields[key] as { maxLength?: number } | undefined;
    const urlHelp =
      secret?.mode === 'url' && key === 'url'
        ? hasToken
          ? t('connections.urlTokenSaved')
          : t('connections.urlTokenHelp')
        : undefined;
    const helpText = help ?? urlHelp;
    return (
      <div className={f.wide ? 'field field-wide' : 'field'} key={key}>
        {label(key, words(f.label) ?? key, f.required)}
        <input
          id={`${id}-${key}`}
          type="text"
          value={String(draft.values[key] ?? '')}
          required={f.required}
          placeholder={words(f.placeholder)}
          inputMode={f.input === 'number' ? 'numeric' : undefined}
          maxLength={f.input === 'number' ? 10 : (schema?.maxLength ?? 200)}
          autoComplete="off"
          spellCheck={false}
          aria-invalid={problems[key] ? true : undefined}
          aria-describedby={describedBy(key, Boolean(helpText))}
          onChange={(e) => setValue(key, e.target.value)}
          data-testid={`profile-${key}`}
        />
        {helpText && (
          <p className="help" id={`${id}-${key}-help`}>
            {helpText}
          </p>
        )}
        {fieldError(key)}
      </div>
    );
  };

  const forgetButton = hasToken && profile && (
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
  );

  const limitHint = spec?.toolLimitHint;
  const toolLimitField = (
    <div className="field">
      {label('toolLimit', t('connections.toolLimit'))}
      <input
        id={`${id}-toolLimit`}
        type="text"
        inputMode="numeric"
        value={draft.toolLimit}
        maxLength={5}
        placeholder={limitHint === undefined ? undefined : String(limitHint)}
        autoComplete="off"
        aria-invalid={problems.toolLimit ? true : undefined}
        aria-describedby={describedBy('toolLimit', true)}
        onChange={(e) => setDraft((d) => ({ ...d, toolLimit: e.target.value }))}
        data-testid="profile-toolLimit"
      />
      <p className="help" id={`${id}-toolLimit-help`}>
        {t('connections.toolLimitHelp')}
        {limitHint !== undefined && <> {t('connections.toolLimitHint', { n: limitHint })}</>}
      </p>
      {fieldError('toolLimit')}
    </div>
  );

  const tokenRequired = secret?.mode === 'required';
  const tokenField = secret && secret.mode !== 'url' && (
    <div className="field">
      <label htmlFor={`${id}-token`}>
        {tokenRequired ? t('connections.token') : t('connections.tokenOptional')}
        {tokenRequired && !hasToken && (
          <span className="required" aria-hidden="true">
            {' '}
            *
          </span>
        )}
        {hasToken && (
          <span className="badge badge-good token-saved" data-testid="profile-token-saved">
            {t('connections.tokenSaved')}
          </span>
        )}
      </label>
      <input
        id={`${id}-token`}
        type="password"
        value={draft.token}
        required={tokenRequired && !hasToken}
        maxLength={16384}
        autoComplete="new-password"
        spellCheck={false}
        aria-invalid={problems.token ? true : undefined}
        aria-describedby={describedBy('token', true)}
        onChange={(e) => setDraft((d) => ({ ...d, token: e.target.value }))}
        data-testid="profile-token"
      />
      <p className="help" id={`${id}-token-help`}>
        {hasToken ? t('connections.tokenHelpSaved') : <TokenStorageNote />}
      </p>
      {fieldError('token')}
      {forgetButton}
    </div>
  );

  /** One fieldset per section that has something in it, in the sections' fixed order. */
  const section = (s: FormSection) => {
    const fields = (spec?.form ?? []).filter((f) => f.section === s);
    const texts = fields.filter((f) => f.input !== 'check');
    const checks = fields.filter((f) => f.input === 'check');
    const withToken = secret?.section === s ? tokenField : undefined;
    const parts = [
      s === 'basics' && (
        <div className="form-grid" key="grid">
          {kindField}
          {nameField}
          {texts.map(field)}
        </div>
      ),
      s !== 'basics' && withToken,
      s !== 'basics' && texts.length > 0 && (
        <div className="form-grid" key="grid">
          {texts.map(field)}
        </div>
      ),
      s === 'behaviour' && (
        <div className="form-grid" key="toolLimit">
          {toolLimitField}
        </div>
      ),
      ...checks.map(field),
      s === 'behaviour' && (
        <label className="check-label" key="autoConnect">
          <input
            type="checkbox"
            checked={draft.autoConnect}
            onChange={(e) => setDraft((d) => ({ ...d, autoConnect: e.target.checked }))}
            data-testid="profile-autoConnect"
          />
          <span>{t('connections.autoConnect')}</span>
        </label>
      ),
      s === 'basics' && secret?.mode === 'url' && forgetButton,
    ].filter(Boolean);
    if (parts.length === 0) return null;
    return (
      <fieldset key={s} data-section={s}>
        <legend>{t(`connections.section.${s}`)}</legend>
        {parts}
      </fieldset>
    );
  };

  const kindField = (
    <div className="field">
      <label htmlFor={`${id}-kind`}>{t('connections.kindLabel')}</label>
      <select
        id={`${id}-kind`}
        value={draft.kind}
        disabled={!!profile}
        aria-describedby={`${id}-kind-help`}
        onChange={(e) => setKind(e.target.value)}
        data-testid="profile-kind"
      >
        {kinds.map((k) => (
          <option key={k.kind} value={k.kind}>
            {textIn(k.title, lang)}
          </option>
        ))}
      </select>
      <p className="help" id={`${id}-kind-help`}>
        {spec && textIn(spec.help, lang)}
      </p>
    </div>
  );

  return (
    <form
      className="card profile-form"
      aria-labelledby={`${id}-title`}
      onSubmit={(e) => void submit(e, false)}
      noValidate
      data-testid="profile-form"
      data-kind={draft.kind}
    >
      <h2 id={`${id}-title`}>
        {profile
          ? t('connections.editTitle', { name: profile.name })
          : t('connections.newTitleKind', { kind: spec ? textIn(spec.title, lang) : draft.kind })}
      </h2>
      {FORM_SECTIONS.map(section)}
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
