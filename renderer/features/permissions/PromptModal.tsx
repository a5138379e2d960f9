/**
 * The permission question for the head of the prompt queue. Deny has the focus; Esc and the
 * close button deny; focus stays inside; the allow buttons wake up a moment after a prompt
 * appears so a click or keypress meant for something else cannot approve it. The buttons read
 * Deny | Allow once | More: a lasting grant (this session, always) is never one Tab from Deny,
 * it takes opening the menu.
 */
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { PendingPrompt, PromptAnswer } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { Badge, riskTone } from '../../components/Badge.js';
import { useFocusTrap, useNow } from '../../components/hooks.js';
import { ChevronDownIcon, CloseIcon, ShieldIcon } from '../../components/Icons.js';
import { MenuButton } from '../../components/MenuButton.js';
import { callSentence, serviceTitle } from '../../i18n/service-text.js';
import { prettyJson, secondsUntil } from '../../lib/format.js';
import { errorText, grantText } from '../../lib/labels.js';
import { useConnectionLabel } from '../../lib/names.js';
import { usePrompts } from '../../store/prompts.js';
import { useServices } from '../../store/services.js';
import { toast } from '../../store/toasts.js';
import { PromptHint } from '../mcp/PromptHint.js';

const ARM_DELAY_MS = 600;

function Prompt({ prompt, index, count }: { prompt: PendingPrompt; index: number; count: number }) {
  const { t, i18n } = useTranslation();
  const ref = useRef<HTMLDivElement>(null);
  const denyRef = useRef<HTMLButtonElement>(null);
  const [busy, setBusy] = useState(false);
  const [armed, setArmed] = useState(false);
  const remove = usePrompts((s) => s.remove);
  const service = useServices((s) => s.services.find((v) => v.name === prompt.service));
  const label = useConnectionLabel();
  const server = label(prompt.connection);
  const now = useNow(true, 500);
  const seconds = secondsUntil(prompt.expiresAt, now);
  const lang = i18n.language;
  const title = serviceTitle(lang, service ?? { name: prompt.service });
  const sentence = callSentence(lang, prompt, prompt.summary);
  const escalation = prompt.grantKey !== prompt.service;

  useFocusTrap(ref);

  // Each new prompt: focus on Deny, allow buttons asleep for a moment.
  useEffect(() => {
    setArmed(false);
    setBusy(false);
    denyRef.current?.focus();
    const timer = setTimeout(() => setArmed(true), ARM_DELAY_MS);
    return () => clearTimeout(timer);
  }, [prompt.id]);

  async function answer(a: PromptAnswer) {
    if (busy) return;
    if (a !== 'deny' && !armed) return;
    setBusy(true);
    try {
      await bridge().invoke('answerPrompt', prompt.id, a);
      // The core also sends promptResolved; a stale prompt (already timed out) goes as well.
      remove(prompt.id);
    } catch (err) {
      toast('error', errorText(t, err));
      setBusy(false);
    }
  }

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        void answerRef.current('deny');
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  const answerRef = useRef(answer);
  answerRef.current = answer;

  const titleId = `prompt-title-${prompt.id}`;
  const descId = `prompt-desc-${prompt.id}`;

  return (
    <div
      ref={ref}
      className="modal prompt"
      role="alertdialog"
      aria-modal="true"
      aria-labelledby={titleId}
      aria-describedby={descId}
      data-testid="prompt-modal"
      data-prompt-id={prompt.id}
      data-service={prompt.service}
    >
      <header className="modal-head">
        <span className="prompt-shield" aria-hidden="true">
          <ShieldIcon />
        </span>
        <h2 id={titleId}>{t('prompt.title', { service: title })}</h2>
        {count > 1 && (
          <span className="badge badge-neutral" data-testid="prompt-queue">
            {t('prompt.queue', { index: index + 1, count })}
          </span>
        )}
        <button
          type="button"
          className="icon-button"
          aria-label={`${t('common.close')} (${t('prompt.deny')})`}
          onClick={() => void answer('deny')}
          disabled={busy}
          data-testid="prompt-close"
        >
          <CloseIcon />
        </button>
      </header>
      <div className="modal-body">
        <div id={descId}>
          <p className="prompt-summary" data-testid="prompt-summary">
            {sentence}
          </p>
          <p className="muted">{t('prompt.wants', { connection: server })}</p>
          <PromptHint hint={prompt.hint} />
        </div>
        <dl className="facts">
          <dt>{t('prompt.server')}</dt>
          <dd data-testid="prompt-connection">{server}</dd>
          <dt>{t('prompt.service')}</dt>
          <dd>
            {title} <code translate="no">{prompt.service}</code>{' '}
            {service && (
              <Badge tone={riskTone(service.risk)} title={t(`risk.${service.risk}Hint`)}>
                {t(`risk.${service.risk}`)}
              </Badge>
            )}
            {escalation && (
              <span className="muted" data-testid="prompt-escalation">
                {' · '}
                {grantText(t, prompt.service, prompt.grantKey)}
              </span>
            )}
          </dd>
          {prompt.resolvedPaths.length > 0 && (
            <>
              <dt>{t('prompt.paths', { count: prompt.resolvedPaths.length })}</dt>
              <dd>
                <ul className="paths" data-testid="prompt-paths">
                  {prompt.resolvedPaths.map((p) => (
                    <li key={p}>
                      <code>{p}</code>
                    </li>
                  ))}
                </ul>
              </dd>
            </>
          )}
        </dl>
        <details className="params">
          <summary>{t('prompt.params')}</summary>
          <pre data-testid="prompt-params" translate="no">
            {prettyJson(prompt.params)}
          </pre>
        </details>
        <p
          className={`countdown${seconds <= 10 ? ' countdown-soon' : ''}`}
          data-testid="prompt-countdown"
        >
          {t('prompt.countdown', { seconds })}
        </p>
      </div>
      <footer className="modal-actions prompt-actions">
        <button
          ref={denyRef}
          type="button"
          className="button button-danger"
          onClick={() => void answer('deny')}
          disabled={busy}
          data-testid="prompt-deny"
        >
          {t('prompt.deny')}
        </button>
        <span className="spacer" />
        <button
          type="button"
          className="button button-primary"
          onClick={() => void answer('once')}
          disabled={busy || !armed}
          data-testid="prompt-allow-once"
        >
          {t('prompt.once')}
        </button>
        <MenuButton
          label={t('prompt.more')}
          icon={<ChevronDownIcon />}
          disabled={busy || !armed}
          testId="prompt-more"
          items={[
            {
              label: t('prompt.session'),
              hint: t('prompt.sessionHint'),
              testId: 'prompt-allow-session',
              onSelect: () => void answer('session'),
            },
            {
              label: t('prompt.always'),
              hint: t('prompt.alwaysHint'),
              testId: 'prompt-always',
              onSelect: () => void answer('always'),
            },
          ]}
        />
      </footer>
      <p className="modal-foot muted">{t('prompt.closeDenies')}</p>
    </div>
  );
}

/** A prompt its server took back leaves with a line saying so, instead of just vanishing. */
function useWithdrawnNotices(): void {
  const { t, i18n } = useTranslation();
  const withdrawn = usePrompts((s) => s.withdrawn);
  const clear = usePrompts((s) => s.clearWithdrawn);
  const services = useServices((s) => s.services);
  const label = useConnectionLabel();
  useEffect(() => {
    if (withdrawn.length === 0) return;
    for (const p of withdrawn) {
      const service = services.find((v) => v.name === p.service) ?? { name: p.service };
      toast(
        'info',
        t('prompt.withdrawn', {
          server: label(p.connection),
          service: serviceTitle(i18n.language, service),
        }),
      );
    }
    clear();
  }, [withdrawn, clear, services, label, t, i18n.language]);
}

export function PromptModal() {
  const prompts = usePrompts((s) => s.prompts);
  useWithdrawnNotices();
  const head = prompts[0];
  if (!head) return null;
  return (
    <div className="modal-backdrop">
      <Prompt key={head.id} prompt={head} index={0} count={prompts.length} />
    </div>
  );
}
