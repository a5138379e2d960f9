/**
 * All fields of one audit record, beside the table (below it in a narrow window). Esc or the
 * close button closes it. A non-modal panel, so a region rather than a dialog.
 */
import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import type { AuditRecord } from '../../../app/contract/index.js';
import { Badge, decisionTone, outcomeTone } from '../../components/Badge.js';
import { CloseIcon } from '../../components/Icons.js';
import { formatDateTime, prettyJson } from '../../lib/format.js';
import { ModelMessage } from '../../components/ModelMessage.js';
import { errorCodeText } from '../../lib/labels.js';
import { useConnectionLabel } from '../../lib/names.js';

export function AuditDrawer({ record, onClose }: { record: AuditRecord; onClose: () => void }) {
  const { t, i18n } = useTranslation();
  const ref = useRef<HTMLElement>(null);
  const label = useConnectionLabel();
  const titleId = `audit-drawer-${record.seq}`;

  useEffect(() => {
    ref.current?.querySelector<HTMLElement>('h2')?.focus();
  }, [record.seq]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      // A permission prompt on top takes Esc for itself.
      if (e.key === 'Escape' && !ref.current?.closest('[inert]')) onClose();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [onClose]);

  const f = (k: keyof typeof record) => t(`activity.fields.${k}`);

  return (
    <section
      ref={ref}
      className="drawer"
      aria-labelledby={titleId}
      data-testid="audit-drawer"
      data-seq={record.seq}
    >
      <header className="drawer-head">
        <h2 id={titleId} tabIndex={-1}>
          {t('activity.detail', { seq: record.seq })}
        </h2>
        <button
          type="button"
          className="icon-button"
          aria-label={t('common.close')}
          onClick={onClose}
        >
          <CloseIcon />
        </button>
      </header>
      <dl className="facts drawer-facts">
        <dt>{f('ts')}</dt>
        <dd>
          <time dateTime={record.ts}>{formatDateTime(record.ts, i18n.language)}</time>{' '}
          <code className="muted small">{record.ts}</code>
        </dd>
        <dt>{f('connection')}</dt>
        <dd>{label({ id: record.connectionId, name: record.connection })}</dd>
        <dt>{f('dialect')}</dt>
        <dd>
          <code>{record.dialect}</code>
        </dd>
        <dt>{f('callId')}</dt>
        <dd>
          <code className="selectable">{record.callId}</code>
        </dd>
        <dt>{f('service')}</dt>
        <dd>
          <code>{record.service}</code>
        </dd>
        <dt>{f('decision')}</dt>
        <dd>
          <Badge tone={decisionTone(record.decision)}>{t(`decision.${record.decision}`)}</Badge>
        </dd>
        <dt>{f('outcome')}</dt>
        <dd>
          <Badge tone={outcomeTone(record.outcome)}>{t(`outcome.${record.outcome}`)}</Badge>
        </dd>
        {record.error && (
          <>
            <dt>{f('error')}</dt>
            <dd>
              {errorCodeText(t, record.error)} <code className="muted">{record.error}</code>
            </dd>
          </>
        )}
        {record.message && (
          <>
            <dt>{f('message')}</dt>
            <dd>
              <ModelMessage
                message={record.message}
                summary={t('refusal.show')}
                testId="audit-drawer-message"
              />
            </dd>
          </>
        )}
        {record.waitMs !== undefined && (
          <>
            <dt>{f('waitMs')}</dt>
            <dd>{t('common.ms', { value: record.waitMs })}</dd>
          </>
        )}
        {record.runMs !== undefined && (
          <>
            <dt>{f('runMs')}</dt>
            <dd>{t('common.ms', { value: record.runMs })}</dd>
          </>
        )}
        <dt>{f('durationMs')}</dt>
        <dd>{t('common.ms', { value: record.durationMs })}</dd>
        {record.intentSeq !== undefined && (
          <>
            <dt>{f('intentSeq')}</dt>
            <dd>#{record.intentSeq}</dd>
          </>
        )}
      </dl>
      <h3 className="drawer-sub">{f('params')}</h3>
      <pre className="drawer-pre" data-testid="audit-drawer-params">
        {prettyJson(record.params)}
      </pre>
      <dl className="facts hashes">
        <dt>{f('paramsSha256')}</dt>
        <dd>
          <code className="hash">{record.paramsSha256}</code>
        </dd>
        <dt>{f('prevHash')}</dt>
        <dd>
          <code className="hash">{record.prevHash}</code>
        </dd>
        <dt>{f('hash')}</dt>
        <dd>
          <code className="hash">{record.hash}</code>
        </dd>
        {record.mac !== undefined && (
          <>
            <dt>{f('mac')}</dt>
            <dd>
              <code className="hash">{record.mac}</code>
            </dd>
          </>
        )}
      </dl>
    </section>
  );
}
