/** A bar while the browser host's bridge is down; actions wait for it to come back. */
import { useTranslation } from 'react-i18next';
import { useUi } from '../store/ui.js';

export function BridgeStatusBar() {
  const { t } = useTranslation();
  const status = useUi((s) => s.bridgeStatus);
  const ready = useUi((s) => s.ready);
  if (status === 'open') return null;
  return (
    <div className="bridge-status" role="status" data-testid="bridge-status" data-status={status}>
      <span className="spinner" aria-hidden="true" />
      <span>{ready ? t('bridge.reconnecting') : t('bridge.connecting')}</span>
      {ready && <span className="muted">{t('bridge.reconnectingHint')}</span>}
    </div>
  );
}
