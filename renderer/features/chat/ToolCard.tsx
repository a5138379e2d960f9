/**
 * One service call in the timeline: what, with which params, the decision and outcome, time,
 * audit link. A refusal reads as a short human line; what the server was told is folded.
 */
import { useTranslation } from 'react-i18next';
import type { ToolItem } from '../../../app/contract/index.js';
import { Badge, decisionTone, outcomeTone } from '../../components/Badge.js';
import { WrenchIcon } from '../../components/Icons.js';
import { ModelMessage } from '../../components/ModelMessage.js';
import { callSentence, serviceTitle } from '../../i18n/service-text.js';
import { summarizeParams } from '../../lib/format.js';
import { errorCodeText } from '../../lib/labels.js';
import { useServices } from '../../store/services.js';
import { useUi } from '../../store/ui.js';

export function ToolCard({ item }: { item: ToolItem }) {
  const { t, i18n } = useTranslation();
  const coreTitle = useServices((s) => s.services.find((v) => v.name === item.service)?.title);
  const title = serviceTitle(i18n.language, { name: item.service, title: coreTitle });
  const sentence = callSentence(i18n.language, item, item.summary);
  const openAudit = useUi((s) => s.openAudit);
  const paramText = summarizeParams(item.params);
  const failed = item.state === 'done' && item.outcome !== undefined && item.outcome !== 'ok';

  return (
    <article
      className={`tool-card tool-${item.state}${failed ? ' tool-failed' : ''}`}
      aria-label={t('tool.label', { service: title })}
      data-testid="tool-card"
      data-service={item.service}
      data-state={item.state}
      data-call-id={item.callId}
    >
      <div className="tool-head">
        <span className="tool-icon" aria-hidden="true">
          <WrenchIcon />
        </span>
        <span className="tool-title">{title}</span>
        <code className="tool-name" translate="no">
          {item.service}
        </code>
        <span className="tool-badges">
          {item.state === 'running' && (
            <Badge tone="neutral">
              <span className="spinner spinner-small" aria-hidden="true" /> {t('tool.running')}
            </Badge>
          )}
          {item.state === 'waiting' && (
            <Badge tone="accent" testId="tool-waiting">
              {t('tool.waiting')}
            </Badge>
          )}
          {item.decision && (
            <Badge tone={decisionTone(item.decision)} testId="tool-decision">
              {t(`decision.${item.decision}`)}
            </Badge>
          )}
          {item.outcome && (
            <Badge tone={outcomeTone(item.outcome)} testId="tool-outcome">
              {t(`outcome.${item.outcome}`)}
            </Badge>
          )}
        </span>
        <span className="tool-meta">
          {item.durationMs !== undefined &&
            // The time the user spent deciding is theirs, not the service's: said apart.
            // A call that did not run (denied, timed out) has only the deciding to show.
            (item.waitMs !== undefined ? (
              <span className="muted">
                {item.runMs !== undefined
                  ? t('tool.durationAsked', {
                      value: item.runMs,
                      waited: (item.waitMs / 1000).toFixed(1),
                    })
                  : t('tool.decided', { waited: (item.waitMs / 1000).toFixed(1) })}
              </span>
            ) : (
              <span className="muted">{t('tool.duration', { value: item.durationMs })}</span>
            ))}
          {item.auditSeq !== undefined && (
            <button
              type="button"
              className="link-button"
              aria-label={t('tool.auditLabel', { seq: item.auditSeq })}
              data-testid="tool-audit-link"
              onClick={() =>
                openAudit({
                  seq: item.auditSeq as number,
                  service: item.service,
                  callId: item.callId,
                })
              }
            >
              {t('tool.audit', { seq: item.auditSeq })}
            </button>
          )}
        </span>
      </div>
      {sentence && <p className="tool-summary">{sentence}</p>}
      <p className="tool-params">
        {paramText ? (
          <span translate="no" title={paramText}>
            {paramText}
          </span>
        ) : (
          <span className="muted">{t('tool.noParams')}</span>
        )}
      </p>
      {failed && (item.code || item.message) && (
        <div className="tool-error" data-testid="tool-refusal">
          <strong data-testid="tool-refusal-line">
            {item.outcome === 'cancelled'
              ? t(item.decision === 'withdrawn' ? 'tool.withdrawn' : 'tool.stoppedWaiting')
              : item.code
                ? errorCodeText(t, item.code)
                : t(`outcome.${item.outcome ?? 'error'}`)}
          </strong>
          {item.message && <ModelMessage message={item.message} testId="tool-model-message" />}
        </div>
      )}
    </article>
  );
}
