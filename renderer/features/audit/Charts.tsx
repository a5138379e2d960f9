/**
 * Two small SVG charts over the loaded records: calls per service, and a histogram of the services'
 * run time (not the time the user took to decide: stats.ts).
 */
import { useDeferredValue, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { useAudit } from '../../store/audit.js';
import { type Bar, callsPerService, latencyHistogram } from './stats.js';

function HBars({ bars, label }: { bars: Bar[]; label: string }) {
  const max = Math.max(1, ...bars.map((b) => b.count));
  const rowH = 22;
  const labelW = 130;
  const width = 520;
  const barW = width - labelW - 50;
  const height = Math.max(rowH, bars.length * rowH);
  const summary = `${label}: ${bars.map((b) => `${b.label} ${b.count}`).join(', ')}`;
  return (
    <svg
      className="chart"
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={summary}
      preserveAspectRatio="xMinYMin meet"
    >
      <title>{summary}</title>
      {bars.map((b, i) => {
        const w = Math.max(2, (b.count / max) * barW);
        const y = i * rowH;
        return (
          <g key={b.label} transform={`translate(0 ${y})`}>
            <text x={labelW - 8} y={rowH / 2 + 4} textAnchor="end" className="chart-label">
              {b.label.length > 16 ? `${b.label.slice(0, 15)}…` : b.label}
            </text>
            <rect x={labelW} y={4} width={w} height={rowH - 8} rx={3} className="chart-bar" />
            <text x={labelW + w + 6} y={rowH / 2 + 4} className="chart-value">
              {b.count}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

function Histogram({ bars, label }: { bars: Bar[]; label: string }) {
  const max = Math.max(1, ...bars.map((b) => b.count));
  const width = 520;
  const height = 152;
  const chartH = 110;
  const gap = 4;
  const colW = (width - gap * (bars.length - 1)) / bars.length;
  const summary = `${label}: ${bars.map((b) => `${b.label} ${b.count}`).join(', ')}`;
  return (
    <svg className="chart" viewBox={`0 0 ${width} ${height}`} role="img" aria-label={summary}>
      <title>{summary}</title>
      <line x1={0} x2={width} y1={chartH + 0.5} y2={chartH + 0.5} className="chart-axis" />
      {bars.map((b, i) => {
        const h = b.count === 0 ? 0 : Math.max(2, (b.count / max) * (chartH - 16));
        const x = i * (colW + gap);
        return (
          <g key={b.label}>
            <rect x={x} y={chartH - h} width={colW} height={h} rx={2} className="chart-bar">
              <title>{`${b.label}: ${b.count}`}</title>
            </rect>
            {b.count > 0 && (
              <text x={x + colW / 2} y={chartH - h - 4} textAnchor="middle" className="chart-value">
                {b.count}
              </text>
            )}
            <text
              x={x + colW / 2}
              y={chartH + (i % 2 ? 28 : 15)}
              textAnchor="middle"
              className="chart-label chart-tick"
            >
              {b.label}
            </text>
          </g>
        );
      })}
    </svg>
  );
}

export function Charts() {
  const { t } = useTranslation();
  const rows = useAudit((s) => s.rows);
  const version = useDeferredValue(useAudit((s) => s.version));
  const { perService, latency, n } = useMemo(() => {
    void version; // recompute when rows change (they change in place)
    const records = rows.records();
    return {
      perService: callsPerService(records),
      latency: latencyHistogram(records),
      n: records.length,
    };
  }, [rows, version]);

  return (
    <details className="charts-details" open>
      <summary>{t('activity.charts')}</summary>
      <section className="charts" aria-label={t('activity.charts')}>
        <figure className="card chart-card">
          <figcaption>{t('activity.perService')}</figcaption>
          {n === 0 ? (
            <p className="muted small">{t('activity.noData')}</p>
          ) : (
            <HBars bars={perService} label={t('activity.perService')} />
          )}
        </figure>
        <figure className="card chart-card">
          <figcaption>{t('activity.latency')}</figcaption>
          {n === 0 ? (
            <p className="muted small">{t('activity.noData')}</p>
          ) : (
            <Histogram bars={latency} label={t('activity.latency')} />
          )}
        </figure>
      </section>
    </details>
  );
}
