/**
 * Activity: the audit log. Filters re-query the core; the table pages in as it scrolls; live
 * records arrive on top; a panel beside the table (below it in a narrow window, never over it)
 * shows one record whole; export and chain verification; the charts below.
 */
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { AuditVerifyResult } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { PageHeader } from '../../components/PageHeader.js';
import { useAction } from '../../lib/useAction.js';
import { NO_FILTERS, useAudit } from '../../store/audit.js';
import { toast } from '../../store/toasts.js';
import { useUi } from '../../store/ui.js';
import { AuditDrawer } from './AuditDrawer.js';
import { AuditTable } from './AuditTable.js';
import { Charts } from './Charts.js';
import { downloadText, exportName, withBom } from './download.js';
import { Filters } from './Filters.js';

function VerifyResult({ result }: { result: AuditVerifyResult }) {
  const { t } = useTranslation();
  return (
    <div
      className={`verify ${result.ok ? 'verify-ok' : 'verify-bad'}`}
      role="status"
      data-testid="audit-verify-result"
      data-ok={result.ok}
    >
      {result.ok ? (
        <>
          <strong>{t('activity.verifyOk', { count: result.records })}</strong>{' '}
          {t('activity.verifyFiles', { count: result.files })}
        </>
      ) : (
        <strong>
          {t('activity.verifyBad', {
            seq: result.firstBadSeq,
            file: result.file,
            reason: result.reason,
          })}
        </strong>
      )}
      {result.keyCheck === 'checked' && (
        <span className="muted"> · {t('activity.verifyKeyed')}</span>
      )}
      {result.tornLines > 0 && (
        <span className="muted"> · {t('activity.verifyTorn', { count: result.tornLines })}</span>
      )}
      {result.tornTail && <span className="muted"> · {t('activity.verifyTornTail')}</span>}
      {result.keyCheck === 'no-key' && (
        <p className="small" data-testid="audit-verify-nokey">
          {t('activity.verifyNoKey')}
        </p>
      )}
    </div>
  );
}

export function ActivityPage() {
  const { t } = useTranslation();
  const rows = useAudit((s) => s.rows);
  const version = useAudit((s) => s.version);
  const loading = useAudit((s) => s.loading);
  const error = useAudit((s) => s.error);
  const query = useAudit((s) => s.query);
  const generation = useAudit((s) => s.generation);
  const reload = useAudit((s) => s.reload);
  const setFilters = useAudit((s) => s.setFilters);
  const focus = useUi((s) => s.auditFocus);
  const clearAuditFocus = useUi((s) => s.clearAuditFocus);
  const [selected, setSelected] = useState<number>();
  const [pendingFocus, setPendingFocus] = useState<number>();
  const [scrollTo, setScrollTo] = useState<number>();
  const [verify, setVerify] = useState<AuditVerifyResult>();
  const verifying = useAction();
  const exporting = useAction();

  useEffect(() => {
    if (generation === 0 && !focus) reload();
  }, [generation, focus, reload]);

  // "audit #N" from a tool card: narrow to that call, then open the record once it is loaded.
  useEffect(() => {
    if (!focus) return;
    setFilters({ ...NO_FILTERS, service: focus.service ?? '', text: focus.callId ?? '' });
    setPendingFocus(focus.seq);
    setSelected(undefined);
    clearAuditFocus();
  }, [focus, setFilters, clearAuditFocus]);

  useEffect(() => {
    if (pendingFocus === undefined || loading) return;
    if (rows.indexOfSeq(pendingFocus) !== undefined) {
      setSelected(pendingFocus);
      setScrollTo(pendingFocus);
      setPendingFocus(undefined);
    } else if (rows.loaded >= Math.min(rows.total, 500)) {
      toast('info', t('activity.focusMissing', { seq: pendingFocus }));
      setPendingFocus(undefined);
    }
  }, [pendingFocus, loading, rows, version, t]);

  const selectedIndex = selected === undefined ? undefined : rows.indexOfSeq(selected);
  const record = selectedIndex === undefined ? undefined : rows.at(selectedIndex);
  const close = useCallback(() => {
    setSelected(undefined);
    document.querySelector<HTMLElement>('[data-testid="audit-table"]')?.focus();
  }, []);

  const doExport = (format: 'json' | 'csv') =>
    void exporting.run(async () => {
      const { offset: _o, limit: _l, ...q } = query;
      const text = await bridge().invoke('exportAudit', q, format);
      const name = exportName(format);
      if (format === 'csv') downloadText(withBom(text), name, 'text/csv;charset=utf-8');
      else downloadText(text, name, 'application/json;charset=utf-8');
      toast('success', t('activity.exported', { file: name }));
    });

  return (
    <div className="page page-activity">
      <PageHeader
        title={t('activity.title')}
        intro={t('activity.intro')}
        actions={
          <>
            <button
              type="button"
              className="button"
              disabled={exporting.busy}
              onClick={() => doExport('json')}
              data-testid="audit-export-json"
            >
              {t('activity.exportJson')}
            </button>
            <button
              type="button"
              className="button"
              disabled={exporting.busy}
              onClick={() => doExport('csv')}
              data-testid="audit-export-csv"
            >
              {t('activity.exportCsv')}
            </button>
            <button
              type="button"
              className="button button-primary"
              disabled={verifying.busy}
              onClick={() =>
                void verifying.run(async () => setVerify(await bridge().invoke('verifyAudit')))
              }
              data-testid="audit-verify"
            >
              {verifying.busy ? t('activity.verifying') : t('activity.verify')}
            </button>
          </>
        }
      />
      {verify && <VerifyResult result={verify} />}
      <Filters />
      <div className="activity-summary">
        <span data-testid="audit-total" data-total={rows.total}>
          {t('activity.total', { count: rows.total })}
        </span>
        {rows.total > 0 && rows.loaded < rows.total && (
          <span className="muted"> · {t('activity.loaded', { count: rows.loaded })}</span>
        )}
        {loading && <span className="spinner spinner-small" aria-hidden="true" />}
        {error && (
          <span className="text-bad" role="alert">
            {' '}
            {error}
          </span>
        )}
      </div>
      <div className={`activity-body${record ? ' with-drawer' : ''}`}>
        <div className="activity-main">
          <AuditTable selectedSeq={selected} onOpen={setSelected} scrollToSeq={scrollTo} />
        </div>
        {record && <AuditDrawer record={record} onClose={close} />}
      </div>
      <Charts />
    </div>
  );
}
