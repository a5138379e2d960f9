/**
 * Add or edit a connection of any kind (Advent, XiaoZhi device, XiaoZhi MCP endpoint, robot).
 * The token is a password field sent only through setSecret after the profile is saved, and never
 * shown back ("token saved" when the core has one). An endpoint's token travels inside its address
 * once; the core moves it to the keychain and keeps the address without it.
 */
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  PROFILE_PATTERNS,
  type ProfileInput,
  type ProfileKind,
  type ProfileView,
} from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { TokenStorageNote } from '../../components/SecretsNote.js';
import { errorText } from '../../lib/labels.js';
import { toast } from '../../store/toasts.js';

type Format = '' | 'pcm' | 'opus';
type Mode = '' | 'manual' | 'vad' | 'auto';

interface Draft {
  kind: ProfileKind;
  name: string;
  url: string;
  deviceId: string;
  clientId: string;
  macAddr: string;
  protocolVersion: '' | '2' | '3';
  listenMode: '' | 'manual' | 'auto';
  authInQuery: boolean;
  reconnectOnToolsChanged: boolean;
  keepAlive: boolean;
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
  const a = p?.kind === 'advent' ? p : undefined;
  const x = p?.kind === 'xiaozhi' ? p : undefined;
  return {
    kind: p?.kind ?? 'advent',
    name: p?.name ?? '',
    url: p && p.kind !== 'advent' ? p.url : '',
    deviceId: x?.deviceId ?? '',
    clientId: x?.clientId ?? '',
    macAddr: p?.kind === 'robot' ? (p.macAddr ?? '') : '',
    // 1 is the default (the empty choice).
    protocolVersion:
      x?.protocolVersion && x.protocolVersion !== 1 ? (String(x.protocolVersion) as '2' | '3') : '',
    listenMode: x?.listenMode ?? '',
    authInQuery: x?.authInQuery ?? false,
    reconnectOnToolsChanged: x?.reconnectOnToolsChanged ?? true,
    keepAlive: x?.keepAlive ?? false,
    host: a?.host ?? '',
    port: a ? String(a.port) : '',
    token: '',
    voiceId: a?.voiceId ?? '',
    lang: a?.lang ?? '',
    format: a?.format ?? '',
    inputAudioFormat: a?.inputAudioFormat ?? '',
    mode: a?.mode ?? '',
    emojiMode: a?.emojiMode ?? '',
    autoConnect: p?.autoConnect ?? false,
  };
}

const LOGIN_VALUE = new RegExp(PROFILE_PATTERNS.loginValue);
const WS_URL = new RegExp(PROFILE_PATTERNS.wsUrl);
const MAC = new RegExp(PROFILE_PATTERNS.mac);
const UUID = new RegExp(PROFILE_PATTERNS.uuid);

/** The profile the core saves, from the draft of one kind. */
function inputOf(d: Draft, id: string | undefined): ProfileInput {
  const base = { name: d.name.trim().slice(0, 100), autoConnect: d.autoConnect };
  const withId = <T extends object>(o: T): T => (id ? { ...o, id } : o);
  const opt = (v: string) => (v.trim() ? v.trim() : undefined);
  switch (d.kind) {
    case 'advent': {
      const input: ProfileInput = withId({
        kind: 'advent' as const,
        ...base,
        host: d.host.trim(),
        port: Number(d.port),
      });
      if (d.voiceId.trim()) input.voiceId = d.voiceId.trim();
      if (d.lang.trim()) input.lang = d.lang.trim();
      if (d.emojiMode.trim()) input.emojiMode = d.emojiMode.trim();
      if (d.format) input.format = d.format;
      if (d.inputAudioFormat) input.inputAudioFormat = d.inputAudioFormat;
      if (d.mode) input.mode = d.mode;
      return input;
    }
    case 'xiaozhi':
      return stripEmpty(
        withId({
          kind: 'xiaozhi' as const,
          ...base,
          url: d.url.trim(),
          deviceId: opt(d.deviceId),
          clientId: opt(d.clientId),
          protocolVersion: d.protocolVersion ? (Number(d.protocolVersion) as 1 | 2 | 3) : undefined,
          listenMode: d.listenMode || undefined,
          authInQuery: d.authInQuery || undefined,
          reconnectOnToolsChanged: d.reconnectOnToolsChanged,
          keepAlive: d.keepAlive || undefined,
        }),
      );
    case 'endpoint':
      return withId({ kind: 'endpoint' as const, ...base, url: d.url.trim() });
    case 'robot':
      return stripEmpty(
        withId({ kind: 'robot' as const, ...base, url: d.url.trim(), macAddr: opt(d.macAddr) }),
      );
  }
}

function stripEmpty<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

const URL_PLACEHOLDER: Record<Exclude<ProfileKind, 'advent'>, string> = {
  xiaozhi: 'ws://192.168.1.10:8000/xiaozhi/v1/',
  endpoint: 'wss://api.xiaozhi.me/mcp/?token=…',
  robot: 'ws://192.168.1.10:8888/ws',
};

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
    if (draft.kind !== 'advent') {
      if (!WS_URL.test(draft.url.trim()) || draft.url.trim().length > 2048)
        p.url = t('connections.urlInvalid');
      else if (draft.kind === 'endpoint' && !profile?.hasToken && !/[?&]token=/.test(draft.url))
        p.url = t('connections.endpointNeedsToken');
      if (draft.deviceId.trim() && !MAC.test(draft.deviceId.trim()))
        p.deviceId = t('connections.macInvalid');
      if (draft.macAddr.trim() && !MAC.test(draft.macAddr.trim()))
        p.macAddr = t('connections.macInvalid');
      if (draft.clientId.trim() && !UUID.test(draft.clientId.trim()))
        p.clientId = t('connections.uuidInvalid');
      return p;
    }
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
    const input = inputOf(draft, profile?.id);

    setSaving(true);
    try {
      const saved = await bridge().invoke('saveConnection', input);
      const token = draft.token.trim();
      if (token && (draft.kind === 'advent' || draft.kind === 'xiaozhi'))
        await bridge().invoke('setSecret', saved.id, token);
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
    k:
      | 'name'
      | 'host'
      | 'port'
      | 'voiceId'
      | 'lang'
      | 'emojiMode'
      | 'url'
      | 'deviceId'
      | 'clientId'
      | 'macAddr',
    label: string,
    extra: {
      placeholder?: string;
      required?: boolean;
      inputMode?: 'numeric';
      max?: number;
      help?: string;
      wide?: boolean;
    } = {},
  ) => {
    const problem = problems[k];
    return (
      <div className={extra.wide ? 'field field-wide' : 'field'}>
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
          aria-describedby={
            [problem && `${id}-${k}-err`, extra.help && `${id}-${k}-help`]
              .filter(Boolean)
              .join(' ') || undefined
          }
          onChange={(e) => set(k, e.target.value)}
          data-testid={`profile-${k}`}
        />
        {extra.help && (
          <p className="help" id={`${id}-${k}-help`}>
            {extra.help}
          </p>
        )}
        {problem && (
          <p className="field-error" id={`${id}-${k}-err`}>
            {problem}
          </p>
        )}
      </div>
    );
  };

  const choice = (
    k: 'format' | 'inputAudioFormat' | 'mode' | 'protocolVersion' | 'listenMode',
    label: string,
    options: { value: string; label: string }[],
    emptyLabel: string = t('connections.serverDefault'),
  ) => (
    <div className="field">
      <label htmlFor={`${id}-${k}`}>{label}</label>
      <select
        id={`${id}-${k}`}
        value={draft[k]}
        onChange={(e) => set(k, e.target.value as never)}
        data-testid={`profile-${k}`}
      >
        <option value="">{emptyLabel}</option>
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

  const check = (
    k: 'autoConnect' | 'authInQuery' | 'reconnectOnToolsChanged' | 'keepAlive',
    label: string,
  ) => (
    <label className="check-label">
      <input
        type="checkbox"
        checked={draft[k]}
        onChange={(e) => set(k, e.target.checked)}
        data-testid={`profile-${k}`}
      />
      <span>{label}</span>
    </label>
  );

  const tokenField = (optional: boolean) => (
    <div className="field">
      <label htmlFor={`${id}-token`}>
        {optional ? t('connections.tokenOptional') : t('connections.token')}
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
        {profile?.hasToken ? t('connections.tokenHelpSaved') : <TokenStorageNote />}
      </p>
      {profile?.hasToken && forgetButton}
    </div>
  );

  const forgetButton = profile?.hasToken && (
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

  const kindLabel: Record<ProfileKind, string> = {
    advent: t('connections.kind.advent'),
    xiaozhi: t('connections.kind.xiaozhi'),
    endpoint: t('connections.kind.endpoint'),
    robot: t('connections.kind.robot'),
  };

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
          : t('connections.newTitleKind', { kind: kindLabel[draft.kind] })}
      </h2>
      <fieldset>
        <legend>{t('connections.basics')}</legend>
        <div className="form-grid">
          <div className="field">
            <label htmlFor={`${id}-kind`}>{t('connections.kindLabel')}</label>
            <select
              id={`${id}-kind`}
              value={draft.kind}
              disabled={!!profile}
              aria-describedby={`${id}-kind-help`}
              onChange={(e) => set('kind', e.target.value as ProfileKind)}
              data-testid="profile-kind"
            >
              {(['advent', 'xiaozhi', 'endpoint', 'robot'] as const).map((k) => (
                <option key={k} value={k}>
                  {kindLabel[k]}
                </option>
              ))}
            </select>
            <p className="help" id={`${id}-kind-help`}>
              {t(`connections.kindHelp.${draft.kind}`)}
            </p>
          </div>
          {text('name', t('connections.name'), {
            required: true,
            placeholder: t('connections.namePlaceholder'),
            max: 100,
          })}
          {draft.kind === 'advent' ? (
            <>
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
            </>
          ) : (
            text('url', t('connections.url'), {
              required: true,
              placeholder: URL_PLACEHOLDER[draft.kind],
              max: 2048,
              wide: true,
              help:
                draft.kind === 'endpoint'
                  ? profile?.hasToken
                    ? t('connections.endpointTokenSaved')
                    : t('connections.endpointUrlHelp')
                  : undefined,
            })
          )}
        </div>
      </fieldset>
      {draft.kind === 'advent' && (
        <fieldset>
          <legend>{t('connections.login')}</legend>
          {tokenField(false)}
          <div className="form-grid">
            {text('voiceId', t('connections.voiceId'))}
            {text('lang', t('connections.lang'), { placeholder: t('connections.langPlaceholder') })}
            {text('emojiMode', t('connections.emojiMode'))}
          </div>
        </fieldset>
      )}
      {draft.kind === 'xiaozhi' && (
        <fieldset>
          <legend>{t('connections.device')}</legend>
          {tokenField(true)}
          <div className="form-grid">
            {text('deviceId', t('connections.deviceId'), {
              placeholder: t('connections.generated'),
              max: 17,
            })}
            {text('clientId', t('connections.clientId'), {
              placeholder: t('connections.generated'),
              max: 36,
            })}
            {choice(
              'protocolVersion',
              t('connections.protocolVersion'),
              [
                { value: '2', label: '2' },
                { value: '3', label: '3' },
              ],
              t('connections.protocolVersionDefault'),
            )}
          </div>
          {check('authInQuery', t('connections.authInQuery'))}
          {check('reconnectOnToolsChanged', t('connections.reconnectOnToolsChanged'))}
          {check('keepAlive', t('connections.keepAlive'))}
        </fieldset>
      )}
      {draft.kind === 'robot' && (
        <fieldset>
          <legend>{t('connections.device')}</legend>
          <div className="form-grid">
            {text('macAddr', t('connections.macAddr'), {
              placeholder: t('connections.generated'),
              max: 17,
            })}
          </div>
        </fieldset>
      )}
      {draft.kind === 'endpoint' && profile?.hasToken && forgetButton}
      <fieldset>
        <legend>
          {draft.kind === 'endpoint' || draft.kind === 'robot'
            ? t('connections.behaviour')
            : t('connections.audio')}
        </legend>
        {draft.kind === 'advent' && (
          <div className="form-grid">
            {choice('format', t('connections.format'), formats)}
            {choice('inputAudioFormat', t('connections.inputAudioFormat'), formats)}
            {choice('mode', t('connections.mode'), [
              { value: 'manual', label: t('connections.modeManual') },
              { value: 'vad', label: t('connections.modeVad') },
              { value: 'auto', label: t('connections.modeAuto') },
            ])}
          </div>
        )}
        {draft.kind === 'xiaozhi' && (
          <div className="form-grid">
            {choice('listenMode', t('connections.mode'), [
              { value: 'manual', label: t('connections.modeManual') },
              { value: 'auto', label: t('connections.modeAuto') },
            ])}
          </div>
        )}
        {check('autoConnect', t('connections.autoConnect'))}
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
