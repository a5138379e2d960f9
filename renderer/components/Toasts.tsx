/**
 * Notices as toasts: info and warnings in a polite live region, errors in an assertive one.
 * Each closes by itself after a while (errors stay longer) or with its button.
 */
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { type Toast, useToasts } from '../store/toasts.js';
import { noticeText } from '../lib/labels.js';
import { CloseIcon } from './Icons.js';

const LIFETIME: Record<Toast['level'], number> = {
  success: 4000,
  info: 6000,
  warn: 9000,
  error: 15000,
};

function ToastItem({ toast }: { toast: Toast }) {
  const { t, i18n } = useTranslation();
  const dismiss = useToasts((s) => s.dismiss);
  useEffect(() => {
    const timer = setTimeout(() => dismiss(toast.id), LIFETIME[toast.level]);
    return () => clearTimeout(timer);
  }, [toast.id, toast.level, dismiss]);
  return (
    <div className={`toast toast-${toast.level}`} data-testid="toast" data-level={toast.level}>
      <span className="toast-dot" aria-hidden="true" />
      <span className="toast-text">
        {toast.words?.key === 'chat.protocolToast'
          ? t(toast.words.key, toast.words.params)
          : toast.words
            ? noticeText(t, toast.words, i18n.language, toast.message)
            : toast.message}
      </span>
      <button
        type="button"
        className="icon-button"
        aria-label={t('common.dismiss')}
        onClick={() => dismiss(toast.id)}
      >
        <CloseIcon />
      </button>
    </div>
  );
}

export function Toasts() {
  const toasts = useToasts((s) => s.toasts);
  const polite = toasts.filter((t) => t.level !== 'error');
  const urgent = toasts.filter((t) => t.level === 'error');
  return (
    <div className="toasts">
      <div role="status" aria-live="polite" className="toast-region">
        {polite.map((t) => (
          <ToastItem key={t.id} toast={t} />
        ))}
      </div>
      <div role="alert" aria-live="assertive" className="toast-region">
        {urgent.map((t) => (
          <ToastItem key={t.id} toast={t} />
        ))}
      </div>
    </div>
  );
}
