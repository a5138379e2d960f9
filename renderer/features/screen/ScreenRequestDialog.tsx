/**
 * A server's take_screenshot call, already allowed in the permission prompt, needs a picture: the
 * browser lets a page capture the screen only after the user picks it, so this asks them to.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { bridge } from '../../bridge/current.js';
import { useFocusTrap } from '../../components/hooks.js';
import { toast } from '../../store/toasts.js';
import { captureScreen } from './capture.js';
import { useScreenRequests } from './screen.js';

export function ScreenRequestDialog() {
  const { t } = useTranslation();
  const request = useScreenRequests((s) => s.requests[0]);
  const [busy, setBusy] = useState(false);
  const id = useId();
  const ref = useRef<HTMLDivElement>(null);
  const chooseRef = useRef<HTMLButtonElement>(null);
  useFocusTrap(ref);

  useEffect(() => {
    if (request) chooseRef.current?.focus();
  }, [request]);

  if (!request) return null;
  const supported =
    typeof navigator !== 'undefined' &&
    typeof navigator.mediaDevices?.getDisplayMedia === 'function';

  async function answer(share: boolean) {
    if (!request) return;
    setBusy(true);
    try {
      const capture = share ? await captureScreen().catch(() => null) : null;
      if (share && !capture) toast('warn', t('screen.notShared'));
      await bridge().invoke('answerScreen', request.id, capture);
    } catch {
      // The request ended meanwhile (timed out or the call stopped): nothing is waiting for it.
    } finally {
      useScreenRequests.getState().remove(request.id);
      setBusy(false);
    }
  }

  return (
    <div className="modal-backdrop">
      <div
        ref={ref}
        className="modal modal-small"
        role="dialog"
        aria-modal="true"
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-body`}
        data-testid="screen-request"
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            void answer(false);
          }
        }}
      >
        <header className="modal-head">
          <h2 id={`${id}-title`}>{t('screen.title')}</h2>
        </header>
        <div className="modal-body">
          <p id={`${id}-body`}>
            {t('screen.body', { server: request.connection.name })}
            {!supported && <> {t('screen.unsupported')}</>}
          </p>
        </div>
        <footer className="modal-actions">
          <span className="spacer" />
          <button
            type="button"
            className="button"
            onClick={() => void answer(false)}
            disabled={busy}
          >
            {t('screen.decline')}
          </button>
          <button
            ref={chooseRef}
            type="button"
            className="button button-primary"
            onClick={() => void answer(true)}
            disabled={busy || !supported}
            data-testid="screen-choose"
          >
            {t('screen.choose')}
          </button>
        </footer>
      </div>
    </div>
  );
}
