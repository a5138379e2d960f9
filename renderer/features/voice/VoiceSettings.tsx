/**
 * Settings → Voice: the active connection's voice options (mode, input and output format — saved
 * on its profile), the microphone and speaker of this computer (kept in this browser), echo
 * cancellation for hands-free, and local voice detection for push-to-talk.
 */
import { useCallback, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ProfileView } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { devicePrefs, listDevices, supportsOutputChoice } from '../../audio/engine.js';
import { useConnectionLabel } from '../../lib/names.js';
import { useAction } from '../../lib/useAction.js';
import { activeConnection, useConnections } from '../../store/connection.js';
import { toast } from '../../store/toasts.js';
import {
  DEFAULT_SHORTCUT,
  applyShortcut,
  checkAccelerator,
  errorText,
  shortcutHost,
  shortcutPref,
  shortcutStartProblem,
} from './shortcut.js';
import { setLocalVad, useLocalVad } from './local-vad-setting.js';
import { voice } from './voice.js';
import { toInput } from '../connections/profile.js';

type AdventView = Extract<ProfileView, { kind: 'advent' }>;
type VoiceFields = Pick<AdventView, 'mode' | 'format' | 'inputAudioFormat'>;

function ConnectionVoice({ profile }: { profile: AdventView }) {
  const { t } = useTranslation();
  const id = useId();
  const { busy, run } = useAction();

  async function save(patch: VoiceFields) {
    const saved = await run(() => bridge().invoke('saveConnection', toInput(profile, patch)));
    if (saved) toast('success', t('voice.settings.saved', { name: saved.name }));
  }

  const locked = busy || profile.demo === true;
  return (
    <>
      {profile.demo && (
        <p className="help" role="note">
          {t('voice.settings.demoFixed')}
        </p>
      )}
      <div className="form-grid">
        <div className="field">
          <label htmlFor={`${id}-mode`}>{t('voice.settings.mode')}</label>
          <select
            id={`${id}-mode`}
            value={profile.mode ?? 'manual'}
            disabled={locked}
            onChange={(e) => void save({ mode: e.target.value as VoiceFields['mode'] })}
            data-testid="voice-mode"
          >
            <option value="manual">{t('voice.settings.modeManual')}</option>
            <option value="vad">{t('voice.settings.modeVad')}</option>
            <option value="auto">{t('voice.settings.modeAuto')}</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-in`}>{t('voice.settings.inputFormat')}</label>
          <select
            id={`${id}-in`}
            value={profile.inputAudioFormat ?? 'pcm'}
            disabled={locked}
            onChange={(e) =>
              void save({ inputAudioFormat: e.target.value as VoiceFields['inputAudioFormat'] })
            }
            data-testid="voice-input-format"
          >
            <option value="pcm">PCM</option>
            <option value="opus">Opus</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-out`}>{t('voice.settings.outputFormat')}</label>
          <select
            id={`${id}-out`}
            value={profile.format ?? 'pcm'}
            disabled={locked}
            onChange={(e) => void save({ format: e.target.value as VoiceFields['format'] })}
            data-testid="voice-output-format"
          >
            <option value="pcm">PCM</option>
            <option value="opus">Opus</option>
          </select>
        </div>
      </div>
    </>
  );
}

function Devices() {
  const { t } = useTranslation();
  const id = useId();
  const [inputs, setInputs] = useState<MediaDeviceInfo[]>([]);
  const [outputs, setOutputs] = useState<MediaDeviceInfo[]>([]);
  const [input, setInput] = useState(devicePrefs.input());
  const [output, setOutput] = useState(devicePrefs.output());
  const [echo, setEcho] = useState(devicePrefs.echoCancellation());
  const canOutput = supportsOutputChoice();

  const refresh = useCallback(() => {
    listDevices().then(
      (d) => {
        setInputs(d.inputs);
        setOutputs(d.outputs);
      },
      () => undefined,
    );
  }, []);
  useEffect(() => {
    refresh();
    const media = navigator.mediaDevices;
    media?.addEventListener?.('devicechange', refresh);
    return () => media?.removeEventListener?.('devicechange', refresh);
  }, [refresh]);

  const label = (d: MediaDeviceInfo, i: number, kind: 'mic' | 'speaker') =>
    d.label || t(kind === 'mic' ? 'voice.settings.micN' : 'voice.settings.speakerN', { n: i + 1 });

  return (
    <div className="form-grid">
      <div className="field">
        <label htmlFor={`${id}-mic`}>{t('voice.settings.microphone')}</label>
        <select
          id={`${id}-mic`}
          value={input}
          onChange={(e) => {
            setInput(e.target.value);
            devicePrefs.setInput(e.target.value);
          }}
          data-testid="voice-mic"
        >
          <option value="">{t('voice.settings.systemDefault')}</option>
          {inputs
            .filter((d) => d.deviceId && d.deviceId !== 'default')
            .map((d, i) => (
              <option key={d.deviceId} value={d.deviceId}>
                {label(d, i, 'mic')}
              </option>
            ))}
        </select>
      </div>
      {canOutput && (
        <div className="field">
          <label htmlFor={`${id}-spk`}>{t('voice.settings.speaker')}</label>
          <select
            id={`${id}-spk`}
            value={output}
            onChange={(e) => {
              setOutput(e.target.value);
              devicePrefs.setOutput(e.target.value);
              voice.engine.setOutput(e.target.value).catch(() => undefined);
            }}
            data-testid="voice-speaker"
          >
            <option value="">{t('voice.settings.systemDefault')}</option>
            {outputs
              .filter((d) => d.deviceId && d.deviceId !== 'default')
              .map((d, i) => (
                <option key={d.deviceId} value={d.deviceId}>
                  {label(d, i, 'speaker')}
                </option>
              ))}
          </select>
        </div>
      )}
      <div className="field">
        <label className="check-label">
          <input
            type="checkbox"
            checked={echo}
            onChange={(e) => {
              setEcho(e.target.checked);
              devicePrefs.setEchoCancellation(e.target.checked);
            }}
            data-testid="voice-echo"
          />{' '}
          {t('voice.settings.echo')}
        </label>
        <p className="help">{t('voice.settings.echoHelp')}</p>
      </div>
      <LocalVadSwitch />
    </div>
  );
}

/**
 * Local voice detection: ends a push-to-talk turn when the user stops speaking. Turning it on
 * loads the model; if that fails the switch stays off and says why.
 */
function LocalVadSwitch() {
  const { t } = useTranslation();
  const id = useId();
  const on = useLocalVad((s) => s.on);
  const loading = useLocalVad((s) => s.loading);
  const error = useLocalVad((s) => s.error);
  return (
    <div className="field">
      <label className="check-label">
        <input
          type="checkbox"
          checked={on || loading}
          disabled={loading}
          aria-describedby={`${id}-help`}
          onChange={(e) => void setLocalVad(voice.engine, e.target.checked)}
          data-testid="voice-local-vad"
          data-state={loading ? 'loading' : on ? 'on' : error ? 'failed' : 'off'}
        />{' '}
        {t('voice.settings.localVad')}
      </label>
      <p id={`${id}-help`} className="help">
        {t('voice.settings.localVadHelp')}
      </p>
      {loading && (
        <p className="help" role="status" data-testid="voice-local-vad-loading">
          {t('voice.settings.localVadLoading')}
        </p>
      )}
      {error && !loading && (
        <p className="field-error" role="alert" data-testid="voice-local-vad-error">
          {t('voice.settings.localVadFailed', { reason: error })}
        </p>
      )}
    </div>
  );
}

/** Electron only: the global push-to-talk shortcut, a toggle (press to talk, press to send). */
function PushToTalkShortcut() {
  const { t } = useTranslation();
  const id = useId();
  const host = shortcutHost();
  const [saved, setSaved] = useState(shortcutPref.get());
  const [text, setText] = useState(saved ?? DEFAULT_SHORTCUT);
  const [problem, setProblem] = useState<string | undefined>(shortcutStartProblem());
  const [busy, setBusy] = useState(false);
  if (!host) return null;

  const enabled = saved !== null;
  const checked = checkAccelerator(text);
  const invalid = !checked.ok;

  async function apply(accelerator: string | null) {
    if (!host) return;
    setBusy(true);
    try {
      const registered = await applyShortcut(host, accelerator);
      setSaved(registered);
      if (registered) setText(registered);
      setProblem(undefined);
      toast(
        'success',
        registered
          ? t('voice.settings.shortcutSaved', { shortcut: registered })
          : t('voice.settings.shortcutOffSaved'),
      );
    } catch (err) {
      setProblem(t('voice.settings.shortcutFailed', { reason: errorText(err) }));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="form-grid" data-testid="voice-shortcut">
      <div className="field">
        <label className="check-label">
          <input
            type="checkbox"
            checked={enabled}
            disabled={busy}
            onChange={(e) =>
              void apply(e.target.checked ? (checked.ok ? text : DEFAULT_SHORTCUT) : null)
            }
            data-testid="voice-shortcut-on"
          />{' '}
          {t('voice.settings.shortcut')}
        </label>
        <p className="help">{t('voice.settings.shortcutHelp')}</p>
      </div>
      <div className="field">
        <label htmlFor={`${id}-accel`}>{t('voice.settings.shortcutKeys')}</label>
        <input
          id={`${id}-accel`}
          type="text"
          value={text}
          maxLength={64}
          spellCheck={false}
          autoComplete="off"
          disabled={busy || !enabled}
          aria-invalid={invalid}
          aria-describedby={`${id}-accel-help`}
          onChange={(e) => setText(e.target.value)}
          data-testid="voice-shortcut-keys"
        />
        <p id={`${id}-accel-help`} className="help">
          {invalid
            ? t('voice.settings.shortcutInvalid')
            : t('voice.settings.shortcutKeysHelp', { shortcut: DEFAULT_SHORTCUT })}
        </p>
        <div className="form-actions">
          <button
            type="button"
            className="button"
            disabled={busy || !enabled || invalid || text === saved}
            onClick={() => void apply(text)}
            data-testid="voice-shortcut-save"
          >
            {t('voice.settings.shortcutSave')}
          </button>
          <button
            type="button"
            className="button"
            disabled={busy || !enabled || saved === DEFAULT_SHORTCUT}
            onClick={() => void apply(DEFAULT_SHORTCUT)}
            data-testid="voice-shortcut-default"
          >
            {t('voice.settings.shortcutDefault')}
          </button>
        </div>
        {problem && (
          <p className="field-error" role="alert" data-testid="voice-shortcut-problem">
            {problem}
          </p>
        )}
      </div>
    </div>
  );
}

export function VoiceSettings() {
  const { t } = useTranslation();
  const id = useId();
  const active = activeConnection(useConnections((s) => s.connections));
  const label = useConnectionLabel();
  return (
    <section
      className="card settings-section"
      aria-labelledby={`${id}-h`}
      data-testid="voice-settings"
    >
      <h2 id={`${id}-h`}>{t('voice.settings.title')}</h2>
      {active ? (
        <>
          <p className="help">
            {t('voice.settings.forConnection', { name: label(active.profile) })}
          </p>
          {active.profile.kind === 'advent' ? (
            <ConnectionVoice profile={active.profile} />
          ) : (
            <p className="help">{t('connections.voiceInProfile')}</p>
          )}
        </>
      ) : (
        <p className="help">{t('voice.settings.noConnection')}</p>
      )}
      <h3>{t('voice.settings.devices')}</h3>
      <Devices />
      {shortcutHost() && (
        <>
          <h3>{t('voice.settings.shortcutTitle')}</h3>
          <PushToTalkShortcut />
        </>
      )}
    </section>
  );
}
