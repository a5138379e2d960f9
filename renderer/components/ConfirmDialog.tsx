/** A yes/no question in a modal; Cancel has the focus, Esc cancels. */
import { useId, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { useDialog } from './hooks.js';

export function ConfirmDialog({
  message,
  confirmLabel,
  onConfirm,
  onCancel,
  danger = true,
}: {
  message: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
  danger?: boolean;
}) {
  const { t } = useTranslation();
  const id = useId();
  const ref = useRef<HTMLDivElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  useDialog(ref, cancelRef, onCancel);
  // Rendered in place (inside the app shell), so a permission prompt on top makes it inert.
  return (
    <div className="modal-backdrop">
      <div
        ref={ref}
        className="modal modal-small"
        role="alertdialog"
        aria-modal="true"
        aria-describedby={`${id}-msg`}
        aria-label={confirmLabel}
        data-testid="confirm-dialog"
      >
        <div className="modal-body">
          <p id={`${id}-msg`}>{message}</p>
        </div>
        <footer className="modal-actions">
          <span className="spacer" />
          <button
            ref={cancelRef}
            type="button"
            className="button"
            onClick={onCancel}
            data-testid="confirm-cancel"
          >
            {t('common.cancel')}
          </button>
          <button
            type="button"
            className={`button ${danger ? 'button-danger' : 'button-primary'}`}
            onClick={onConfirm}
            data-testid="confirm-ok"
          >
            {confirmLabel}
          </button>
        </footer>
      </div>
    </div>
  );
}
