/**
 * The audit records as a virtualized grid: only the rows in view exist in the DOM, pages are
 * fetched for what is shown, and new records arriving on top do not move what the user reads.
 * One tab stop, the grid itself (it scrolls, its header row stays on top, and it names the
 * active row with aria-activedescendant, which only a widget role may carry); arrows move,
 * Enter opens the record.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { type KeyboardEvent, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { AuditRecord } from '../../../app/contract/index.js';
import { Badge, decisionTone, outcomeTone } from '../../components/Badge.js';
import { formatDateTime } from '../../lib/format.js';
import { useConnectionLabel } from '../../lib/names.js';
import { useAudit } from '../../store/audit.js';
import { runTimeOf } from './stats.js';

export const ROW_HEIGHT = 38;
/** The sticky header row's height: the rows start below it inside the scrolling grid. */
const HEAD_HEIGHT = 34;

function Cells({ r, lang }: { r: AuditRecord; lang: string }) {
  const { t } = useTranslation();
  const label = useConnectionLabel();
  const server = label({ id: r.connectionId, name: r.connection });
  // The service's own time: the total counts the user's thinking ("10718 ms" to write a note).
  const ran = runTimeOf(r);
  return (
    <>
      <span role="gridcell" className="col-seq">
        {r.seq}
      </span>
      <span role="gridcell" className="col-time">
        <time dateTime={r.ts}>{formatDateTime(r.ts, lang)}</time>
      </span>
      <span role="gridcell" className="col-conn" title={server}>
        {server}
      </span>
      <span role="gridcell" className="col-service">
        <code translate="no">{r.service}</code>
      </span>
      <span role="gridcell" className="col-decision">
        <Badge tone={decisionTone(r.decision)}>{t(`decision.${r.decision}`)}</Badge>
      </span>
      <span role="gridcell" className="col-outcome">
        <Badge tone={outcomeTone(r.outcome)}>{t(`outcome.${r.outcome}`)}</Badge>
      </span>
      <span role="gridcell" className="col-duration">
        {ran === undefined ? (
          <span title={t('activity.notRun')}>
            <span aria-hidden="true">—</span>
            <span className="sr-only">{t('activity.notRun')}</span>
          </span>
        ) : (
          t('common.ms', { value: ran })
        )}
      </span>
    </>
  );
}

export function AuditTable({
  selectedSeq,
  onOpen,
  scrollToSeq,
}: {
  selectedSeq: number | undefined;
  onOpen: (seq: number) => void;
  /** Bring this record into view when it is loaded. */
  scrollToSeq?: number;
}) {
  const { t, i18n } = useTranslation();
  const rows = useAudit((s) => s.rows);
  const version = useAudit((s) => s.version);
  const generation = useAudit((s) => s.generation);
  const loading = useAudit((s) => s.loading);
  const ensureRange = useAudit((s) => s.ensureRange);
  const filtered = useAudit((s) => Object.keys(s.query).some((k) => k !== 'order'));
  const total = rows.total;
  const scrollRef = useRef<HTMLDivElement>(null);
  const [active, setActive] = useState(0);

  const virtualizer = useVirtualizer({
    count: total,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    scrollMargin: HEAD_HEIGHT,
    scrollPaddingStart: HEAD_HEIGHT,
  });
  const items = virtualizer.getVirtualItems();
  const first = items[0]?.index ?? 0;
  const last = items[items.length - 1]?.index ?? 0;

  useEffect(() => {
    if (total > 0) ensureRange(first, last + 1);
  }, [first, last, total, version, ensureRange]);

  // New filters: back to the top. New records on top: keep the rows under the reader still.
  const prev = useRef({ total, generation });
  useLayoutEffect(() => {
    const el = scrollRef.current;
    const p = prev.current;
    if (el) {
      if (p.generation !== generation) {
        el.scrollTop = 0;
        setActive(0);
      } else if (p.total > 0 && total > p.total) {
        const added = total - p.total;
        if (el.scrollTop > 0) el.scrollTop += added * ROW_HEIGHT;
        setActive((a) => (a > 0 ? a + added : a));
      }
    }
    prev.current = { total, generation };
  }, [total, generation]);

  useEffect(() => {
    if (scrollToSeq === undefined) return;
    const index = rows.indexOfSeq(scrollToSeq);
    if (index !== undefined) {
      setActive(index);
      virtualizer.scrollToIndex(index, { align: 'center' });
    }
  }, [scrollToSeq, rows, version, virtualizer]);

  function move(to: number) {
    const next = Math.max(0, Math.min(total - 1, to));
    setActive(next);
    virtualizer.scrollToIndex(next, { align: 'auto' });
  }

  function onKeyDown(e: KeyboardEvent<HTMLDivElement>) {
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 400) / ROW_HEIGHT) - 1);
    switch (e.key) {
      case 'ArrowDown':
        move(active + 1);
        break;
      case 'ArrowUp':
        move(active - 1);
        break;
      case 'PageDown':
        move(active + page);
        break;
      case 'PageUp':
        move(active - page);
        break;
      case 'Home':
        move(0);
        break;
      case 'End':
        move(total - 1);
        break;
      case 'Enter':
      case ' ': {
        const r = rows.at(active);
        if (r) onOpen(r.seq);
        break;
      }
      default:
        return;
    }
    e.preventDefault();
  }

  const activeRendered = items.some((v) => v.index === active);

  return (
    <div className="audit-table-wrap">
      <div
        ref={scrollRef}
        className="audit-table"
        role="grid"
        aria-label={t('activity.table')}
        aria-rowcount={total + 1}
        aria-colcount={7}
        aria-busy={loading}
        tabIndex={0}
        aria-activedescendant={activeRendered && total > 0 ? `audit-row-${active}` : undefined}
        onKeyDown={onKeyDown}
        data-testid="audit-table"
      >
        <div role="rowgroup" className="audit-head">
          <div role="row" aria-rowindex={1} className="audit-row audit-row-head">
            <span role="columnheader" className="col-seq">
              {t('activity.colSeq')}
            </span>
            <span role="columnheader" className="col-time">
              {t('activity.colTime')}
            </span>
            <span role="columnheader" className="col-conn">
              {t('activity.colServer')}
            </span>
            <span role="columnheader" className="col-service">
              {t('activity.colService')}
            </span>
            <span role="columnheader" className="col-decision">
              {t('activity.colDecision')}
            </span>
            <span role="columnheader" className="col-outcome">
              {t('activity.colOutcome')}
            </span>
            <span role="columnheader" className="col-duration">
              {t('activity.colDuration')}
            </span>
          </div>
        </div>
        <div role="rowgroup" className="audit-body" data-testid="audit-body">
          <div
            style={{
              height: Math.max(0, virtualizer.getTotalSize() - HEAD_HEIGHT),
              position: 'relative',
            }}
          >
            {items.map((v) => {
              const r = rows.at(v.index);
              const selected = r !== undefined && r.seq === selectedSeq;
              return (
                <div
                  key={v.key}
                  id={`audit-row-${v.index}`}
                  role="row"
                  aria-rowindex={v.index + 2}
                  aria-selected={selected}
                  className={`audit-row${v.index === active ? ' audit-row-active' : ''}${selected ? ' audit-row-selected' : ''}${v.index % 2 ? ' audit-row-odd' : ''}`}
                  style={{
                    height: ROW_HEIGHT,
                    transform: `translateY(${v.start - HEAD_HEIGHT}px)`,
                  }}
                  data-testid={r ? 'audit-row' : 'audit-row-loading'}
                  data-seq={r?.seq}
                  onClick={() => {
                    setActive(v.index);
                    if (r) onOpen(r.seq);
                  }}
                >
                  {r ? (
                    <Cells r={r} lang={i18n.language} />
                  ) : (
                    <span role="gridcell" className="audit-placeholder">
                      <span className="skeleton" aria-hidden="true" />
                      <span className="sr-only">{t('activity.loadingRow')}</span>
                    </span>
                  )}
                </div>
              );
            })}
          </div>
        </div>
      </div>
      {total === 0 && !loading && (
        <p className="audit-empty muted" data-testid="audit-empty">
          {filtered ? t('activity.empty') : t('activity.emptyAll')}
        </p>
      )}
    </div>
  );
}
