/**
 * A bar while the browser host's bridge is down; actions wait for it to come back. When the agent
 * refuses this page's key (no key in the address, or one from an earlier launch), waiting cannot
 * help: say so and how to get a working address.
 */
import { useTranslation } from 'react-i18next';
import { useUi } from '../store/ui.js';

export function BridgeRefused() {
  const { t } = useTranslation();
  return (
    <div className="bridge-refused" role="alert" data-testid="bridge-refused">
      <h1 tabIndex={-1}>{t('bridge.refusedTitle')}</h1>
      <p>{t('bridge.refused')}</p>
      <p>
        {t('bridge.refusedHow')} <code>advent-agent ui</code>
      </p>
    </div>
  );
}

export function BridgeStatusBar() {
  const { t } = useTranslation();
  const status = useUi((s) => s.bridgeStatus);
  const ready = useUi((s) => s.ready);
  if (status === 'open') return null;
  if (status === 'refused') return ready ? <BridgeRefused /> : null;
  return (
    <div className="bridge-status" role="status" data-testid="bridge-status" data-status={status}>
      <span className="spinner" aria-hidden="true" />
      <span>{ready ? t('bridge.reconnecting') : t('bridge.connecting')}</span>
      {ready && <span className="muted">{t('bridge.reconnectingHint')}</span>}
    </div>
  );
}
