/**
 * The conversation: user bubbles, assistant replies streaming in, tool cards, notices. Sticks to
 * the bottom while the user is there; once they scroll up it stays put and offers a way back.
 */
import { memo, useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ChatItem } from '../../../app/contract/index.js';
import { DownIcon, MicSmallIcon } from '../../components/Icons.js';
import { formatTime } from '../../lib/format.js';
import { noticeText } from '../../lib/labels.js';
import { ReminderCard } from '../reminders/ReminderCard.js';
import { ToolCard } from './ToolCard.js';

const NEAR_BOTTOM_PX = 48;

const Item = memo(function Item({
  item,
  connectionName,
}: {
  item: ChatItem;
  connectionName?: string;
}) {
  const { t, i18n } = useTranslation();
  const time = formatTime(item.at, i18n.language);
  switch (item.kind) {
    case 'user':
      return (
        <div className="msg msg-user" data-testid="chat-user" data-id={item.id}>
          <div className={item.voiceMs !== undefined ? 'bubble bubble-voice' : 'bubble'}>
            {item.voiceMs !== undefined && !item.text && (
              <span className="voice-tag" data-testid="voice-bubble" data-ms={item.voiceMs}>
                <span className="voice-wave" aria-hidden="true">
                  <i />
                  <i />
                  <i />
                  <i />
                </span>
                {t('chat.voiceTurn', { seconds: (item.voiceMs / 1000).toFixed(1) })}
              </span>
            )}
            {item.text && (
              <span className="bubble-text">
                {item.voiceMs !== undefined && (
                  <span className="voice-mark" role="img" aria-label={t('chat.voiceTranscript')}>
                    <MicSmallIcon />{' '}
                  </span>
                )}
                {item.text}
              </span>
            )}
          </div>
          <span className="msg-meta">
            <span className="sr-only">{t('chat.you')} </span>
            {connectionName && <span>{connectionName} · </span>}
            <time dateTime={new Date(item.at).toISOString()}>{time}</time>
          </span>
        </div>
      );
    case 'assistant':
      return (
        <div
          className={`msg msg-assistant msg-${item.state}`}
          data-testid="chat-assistant"
          data-id={item.id}
          data-state={item.state}
          aria-busy={item.state === 'streaming'}
        >
          <div className="bubble">
            {item.thought && (
              <details className="thought" data-testid="chat-thought">
                <summary>{t('chat.thought')}</summary>
                <p className="thought-text">{item.thought}</p>
              </details>
            )}
            <span className="bubble-text">{item.text}</span>
            {item.state === 'streaming' && (
              <span className="cursor" aria-hidden="true" title={t('chat.streaming')} />
            )}
          </div>
          <span className="msg-meta">
            <span className="sr-only">{t('chat.assistant')} </span>
            {connectionName && <span>{connectionName} · </span>}
            <time dateTime={new Date(item.at).toISOString()}>{time}</time>
            {item.state === 'interrupted' && (
              <span className="badge badge-warn" data-testid="chat-interrupted">
                {t('chat.interrupted')}
              </span>
            )}
          </span>
        </div>
      );
    case 'tool':
      return (
        <div className="msg msg-tool" data-id={item.id}>
          <ToolCard item={item} />
        </div>
      );
    case 'reminder':
      return <ReminderCard item={item} />;
    case 'notice':
      return (
        <div
          className={`msg msg-notice notice-${item.level}`}
          data-testid="chat-notice"
          data-id={item.id}
        >
          <span className="sr-only">{t('chat.notice')}: </span>
          {item.technical ? (
            <span>
              {connectionName && <span>{connectionName}: </span>}
              {t('chat.protocolNotice')}
              <details className="notice-details">
                <summary>{t('chat.technicalDetails')}</summary>
                <code translate="no">{item.text}</code>
              </details>
            </span>
          ) : (
            <span>
              {item.words ? noticeText(t, item.words, i18n.language, item.text) : item.text}
            </span>
          )}
          <time className="muted" dateTime={new Date(item.at).toISOString()}>
            {time}
          </time>
        </div>
      );
  }
});

export function Timeline({
  items,
  names,
}: {
  items: ChatItem[];
  /** Connection names by id, when several connections appear in the timeline. */
  names?: Record<string, string>;
}) {
  const { t } = useTranslation();
  const ref = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const [away, setAway] = useState(false);

  const toBottom = useCallback((smooth = false) => {
    const el = ref.current;
    if (!el) return;
    el.scrollTo({ top: el.scrollHeight, behavior: smooth ? 'smooth' : 'auto' });
    stick.current = true;
    setAway(false);
  }, []);

  const onScroll = useCallback(() => {
    const el = ref.current;
    if (!el) return;
    const near = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
    stick.current = near;
    if (near) setAway(false);
  }, []);

  // Content changed (a new item, a streamed piece): follow it only if the user was at the bottom.
  const last = items[items.length - 1];
  const lastText = last?.kind === 'assistant' ? last.text.length : 0;
  useLayoutEffect(() => {
    if (stick.current) {
      const el = ref.current;
      if (el) el.scrollTop = el.scrollHeight;
    } else if (items.length > 0) setAway(true);
  }, [items, lastText]);

  // Growing content such as wrapped lines after a resize.
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => {
      if (stick.current) el.scrollTop = el.scrollHeight;
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  return (
    <div className="timeline-wrap">
      <div
        className="timeline"
        ref={ref}
        onScroll={onScroll}
        role="log"
        aria-label={t('chat.timeline')}
        aria-live="polite"
        aria-relevant="additions"
        tabIndex={0}
        data-testid="chat-timeline"
      >
        {items.length === 0 ? (
          <p className="timeline-empty muted">{t('chat.empty')}</p>
        ) : (
          items.map((item) => (
            <Item
              key={item.id}
              item={item}
              connectionName={names && item.connection ? names[item.connection] : undefined}
            />
          ))
        )}
      </div>
      {away && (
        <button
          type="button"
          className="jump-latest button button-small"
          onClick={() => toBottom(true)}
          data-testid="jump-latest"
        >
          <DownIcon />
          {t('chat.jumpToLatest')}
        </button>
      )}
    </div>
  );
}
