/**
 * The active connection's state at the top of the chat: connecting / logging in / connected /
 * reconnecting in Ns (live countdown, last error) / offline with the reason; a switcher when
 * several connections are live.
 */
import { useTranslation } from 'react-i18next';
import type { ConnectionView } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { useNow } from '../../components/hooks.js';
import { secondsUntil } from '../../lib/format.js';
import { useConnectionLabel } from '../../lib/names.js';
import { useAction } from '../../lib/useAction.js';
import { activeConnection, isLive, useConnections } from '../../store/connection.js';
import { useUi } from '../../store/ui.js';

function tone(view: ConnectionView | undefined): string {
  switch (view?.state.status) {
    case 'ready':
      return 'good';
    case 'connecting':
    case 'authenticating':
    case 'reconnecting':
      return 'warn';
    case 'offline':
      return 'bad';
    default:
      return 'neutral';
  }
}

export function ConnectionBanner() {
  const { t } = useTranslation();
  const connections = useConnections((s) => s.connections);
  const go = useUi((s) => s.go);
  const { busy, run } = useAction();
  const label = useConnectionLabel();
  const nameOf = (c: ConnectionView) => label({ id: c.profile.id, name: c.profile.name });
  const active = activeConnection(connections);
  const live = connections.filter((c) => isLive(c.state));
  const now = useNow(active?.state.status === 'reconnecting');

  let text: string;
  let detail: string | undefined;
  if (!active) {
    text = t('banner.none');
    detail = t('banner.noneHint');
  } else {
    const name = nameOf(active);
    const s = active.state;
    switch (s.status) {
      case 'idle':
        text = t('banner.idle', { name });
        break;
      case 'connecting':
        text = t('banner.connecting', { name });
        break;
      case 'authenticating':
        text = t('banner.authenticating', { name });
        break;
      case 'ready':
        text = t('banner.ready', { name });
        break;
      case 'reconnecting': {
        const seconds = secondsUntil(s.nextAt, now);
        text =
          seconds > 0
            ? t('banner.reconnecting', { name, seconds })
            : t('banner.reconnectingNow', { name });
        detail = s.lastError ? t('banner.lastError', { error: s.lastError }) : undefined;
        break;
      }
      case 'offline':
        text = t('banner.offline', { name, reason: t(`offlineReason.${s.reason}`) });
        detail = s.message || undefined;
        break;
    }
  }

  // What screen readers hear: the state, not every tick of the countdown.
  const spoken =
    active?.state.status === 'reconnecting'
      ? t('banner.reconnectingNow', { name: nameOf(active) })
      : text;

  const canConnect =
    active && (active.state.status === 'idle' || active.state.status === 'offline');

  return (
    <section
      className={`banner banner-${tone(active)}`}
      aria-label={t('banner.label')}
      data-testid="connection-banner"
      data-state={active?.state.status ?? 'none'}
    >
      <span className="banner-dot" aria-hidden="true" />
      <span className="sr-only" role="status">
        {spoken}
      </span>
      <div className="banner-text">
        <span className="banner-main">
          {text}
          {active?.profile.demo && <span className="badge badge-accent">{t('banner.demo')}</span>}
        </span>
        {detail && <span className="banner-detail">{detail}</span>}
      </div>
      <div className="banner-actions">
        {live.length > 1 && (
          <label className="inline-field">
            <span>{t('banner.switcher')}</span>
            <select
              value={active?.profile.id ?? ''}
              data-testid="connection-switcher"
              onChange={(e) => {
                const id = e.target.value;
                void run(() => bridge().invoke('setActiveConnection', id));
              }}
            >
              {!active && <option value="">—</option>}
              {live.map((c) => (
                <option key={c.profile.id} value={c.profile.id}>
                  {nameOf(c)}
                </option>
              ))}
            </select>
          </label>
        )}
        {canConnect && (
          <button
            type="button"
            className="button button-small"
            disabled={busy}
            data-testid="banner-connect"
            onClick={() => void run(() => bridge().invoke('connect', active.profile.id))}
          >
            {t('banner.connect')}
          </button>
        )}
        {!active && (
          <button type="button" className="button button-small" onClick={() => go('connections')}>
            {t('banner.openConnections')}
          </button>
        )}
      </div>
    </section>
  );
}
