/**
 * Settings → the services over Streamable HTTP for MCP apps (issue 12): on/off, the port, what
 * the endpoint is doing (off, listening, failed and why), and for a client to be set up, the
 * address and the bearer token. The token is shown once, when it is made, to be copied then; the
 * page cannot read it back, so afterwards it offers only to make a new one.
 */
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import type { McpHttpState, SettingsView } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { ConfirmDialog } from '../../components/ConfirmDialog.js';
import { Switch } from '../../components/Switch.js';
import { useAction } from '../../lib/useAction.js';
import { useMcpHttp } from '../../store/mcpHttp.js';
import { useSettings } from '../../store/settings.js';
import { toast } from '../../store/toasts.js';

function stateText(t: TFunction, state: McpHttpState): string {
  switch (state.status) {
    case 'off':
      return t('mcpHttp.state.off');
    case 'starting':
      return t('mcpHttp.state.starting', { port: state.port });
    case 'listening':
      return t('mcpHttp.state.listening', { port: state.port });
    case 'failed':
      return state.reason === 'port_in_use'
        ? t('mcpHttp.state.portInUse', { port: state.port })
        : t('mcpHttp.state.failed', { message: state.message });
  }
}

export function McpHttpSection({ settings }: { settings: SettingsView }) {
  const { t } = useTranslation();
  const id = useId();
  const state = useMcpHttp((s) => s.state);
  const { busy, run } = useAction();
  const [port, setPort] = useState(String(settings.mcpHttp.port));
  /** The token just made, shown until the page is left; never fetched again. */
  const [fresh, setFresh] = useState<string | undefined>();
  const [confirming, setConfirming] = useState(false);
  const tokenField = useRef<HTMLInputElement>(null);
  useEffect(() => setPort(String(settings.mcpHttp.port)), [settings.mcpHttp.port]);
  // The new token takes the focus, so a screen reader reads it with the line saying it is shown once.
  useEffect(() => {
    if (fresh) tokenField.current?.focus();
  }, [fresh]);

  const portN = Number(port);
  const portOk = /^\d+$/.test(port) && portN >= 1024 && portN <= 65535;
  const listening = state.status === 'listening';

  async function save(enabled: boolean, newPort: number) {
    const saved = await run(() =>
      bridge().invoke('saveSettings', { mcpHttp: { enabled, port: newPort } }),
    );
    if (saved) useSettings.getState().replace(saved);
  }

  async function copy(text: string) {
    try {
      await navigator.clipboard.writeText(text);
      toast('success', t('mcpHttp.copied'));
    } catch {
      toast('error', t('mcpHttp.copyFailed'));
    }
  }

  async function makeToken() {
    const made = await run(() => bridge().invoke('resetMcpHttpToken'));
    if (made === undefined) return;
    setFresh(made);
    toast('success', t('mcpHttp.resetDone'));
  }

  function submitPort(e: FormEvent) {
    e.preventDefault();
    if (portOk) void save(settings.mcpHttp.enabled, portN);
  }

  return (
    <section
      className="card settings-section"
      aria-labelledby={`${id}-h`}
      data-testid="settings-mcp-http"
    >
      <h2 id={`${id}-h`}>{t('mcpHttp.title')}</h2>
      <p className="help" id={`${id}-intro`}>
        {t('mcpHttp.intro')}
      </p>
      <div className="root-row">
        <Switch
          checked={settings.mcpHttp.enabled}
          onChange={(on) => void save(on, portOk ? portN : settings.mcpHttp.port)}
          label={t('mcpHttp.enable')}
          describedBy={`${id}-intro`}
          disabled={busy}
          testId="mcp-http-enable"
        />
        <span aria-hidden="true">{t('mcpHttp.enable')}</span>
      </div>
      <form className="field" onSubmit={submitPort}>
        <label htmlFor={`${id}-port`}>{t('mcpHttp.port')}</label>
        <div className="root-row">
          <input
            id={`${id}-port`}
            type="number"
            min={1024}
            max={65535}
            step={1}
            className="input-narrow"
            value={port}
            aria-invalid={!portOk || undefined}
            aria-describedby={portOk ? undefined : `${id}-port-err`}
            onChange={(e) => setPort(e.target.value)}
            data-testid="mcp-http-port"
          />
          <button
            type="submit"
            className="button button-small"
            disabled={busy || !portOk || portN === settings.mcpHttp.port}
            data-testid="mcp-http-port-apply"
          >
            {t('mcpHttp.apply')}
          </button>
        </div>
        {!portOk && (
          <p className="field-error" id={`${id}-port-err`}>
            {t('mcpHttp.portInvalid')}
          </p>
        )}
      </form>
      <div className="field">
        <span className="field-label">{t('mcpHttp.status')}</span>
        <p
          role="status"
          className={state.status === 'failed' ? 'warning' : undefined}
          data-testid="mcp-http-state"
          data-status={state.status}
        >
          {stateText(t, state)}
        </p>
      </div>
      {listening && (
        <>
          <div className="field">
            <label htmlFor={`${id}-url`}>{t('mcpHttp.address')}</label>
            <div className="root-row">
              <input
                id={`${id}-url`}
                className="mono"
                readOnly
                value={state.url}
                onFocus={(e) => e.target.select()}
                data-testid="mcp-http-url"
              />
              <button
                type="button"
                className="button button-small"
                onClick={() => void copy(state.url)}
                data-testid="mcp-http-copy-url"
              >
                {t('mcpHttp.copyAddress')}
              </button>
            </div>
          </div>
          <div className="field" data-testid="mcp-http-token-field">
            {fresh ? (
              <label htmlFor={`${id}-token`}>{t('mcpHttp.token')}</label>
            ) : (
              <span className="field-label">{t('mcpHttp.token')}</span>
            )}
            {fresh ? (
              <>
                <div className="root-row">
                  <input
                    ref={tokenField}
                    id={`${id}-token`}
                    className="mono"
                    readOnly
                    value={fresh}
                    aria-describedby={`${id}-token-once ${id}-token-help`}
                    onFocus={(e) => e.target.select()}
                    data-testid="mcp-http-token"
                  />
                  <button
                    type="button"
                    className="button button-small"
                    onClick={() => void copy(fresh)}
                    data-testid="mcp-http-copy-token"
                  >
                    {t('mcpHttp.copyToken')}
                  </button>
                </div>
                <p className="warning" id={`${id}-token-once`} data-testid="mcp-http-token-once">
                  {t('mcpHttp.shownOnce')}
                </p>
              </>
            ) : (
              <p data-testid="mcp-http-token-hidden">
                {state.hasToken ? t('mcpHttp.tokenWasShown') : t('mcpHttp.noToken')}
              </p>
            )}
            <p className="help" id={`${id}-token-help`}>
              {t('mcpHttp.tokenHelp')}
            </p>
            <div>
              {/* A token that exists may be in use: replacing it disconnects apps, so ask first. */}
              <button
                type="button"
                className={
                  state.hasToken ? 'button button-small button-danger-quiet' : 'button button-small'
                }
                disabled={busy}
                onClick={() => (state.hasToken ? setConfirming(true) : void makeToken())}
                data-testid="mcp-http-reset-token"
              >
                {state.hasToken ? t('mcpHttp.reset') : t('mcpHttp.make')}
              </button>
            </div>
          </div>
        </>
      )}
      {confirming && (
        <ConfirmDialog
          message={t('mcpHttp.confirmReset')}
          confirmLabel={t('mcpHttp.reset')}
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            void makeToken();
          }}
        />
      )}
    </section>
  );
}
