/** The text box: Enter sends, Shift+Enter breaks the line; disabled with a hint until a connection is ready. */
import { type KeyboardEvent, useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ConnectionView } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { SendIcon } from '../../components/Icons.js';
import { errorText } from '../../lib/labels.js';
import { toast } from '../../store/toasts.js';
import { voice } from '../voice/voice.js';
import { MicButton } from '../voice/MicButton.js';
import { useUi } from '../../store/ui.js';

const MAX_TEXT = 8000;

export function Composer({
  active,
  focusWhenReady = false,
}: {
  active: ConnectionView | undefined;
  /** Take the focus once the box can be typed in, unless the user has put it somewhere already. */
  focusWhenReady?: boolean;
}) {
  const { t } = useTranslation();
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const ref = useRef<HTMLTextAreaElement>(null);
  const hintId = useId();
  const bridgeOpen = useUi((s) => s.bridgeStatus === 'open');
  const canChat = active?.capabilities.chat !== false;
  const ready = bridgeOpen && active?.state.status === 'ready' && canChat;
  const hint = !bridgeOpen
    ? t('bridge.reconnecting')
    : !active
      ? t('chat.disabledNoConnection')
      : !canChat
        ? t('connections.noChat', { name: active.profile.name })
        : !ready
          ? t('chat.disabledConnecting')
          : t('chat.sendHint');

  // A disabled box cannot hold the focus, so it is given once the connection is ready; only while
  // nothing has it (the button that started this is gone), never taken from where the user went.
  const focused = useRef(false);
  useEffect(() => {
    if (!focusWhenReady || !ready || focused.current) return;
    focused.current = true;
    const current = document.activeElement;
    if (current === null || current === document.body) ref.current?.focus();
  }, [focusWhenReady, ready]);

  // Grow with the text up to a few lines.
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = 'auto';
    el.style.height = `${Math.min(el.scrollHeight, 180)}px`;
  }, [text]);

  async function send() {
    const message = text.trim();
    if (!message || !ready || sending) return;
    setSending(true);
    try {
      const { taskId } = await bridge().invoke('sendText', message.slice(0, MAX_TEXT));
      voice.expectReply(taskId);
      setText('');
    } catch (err) {
      toast('error', errorText(t, err));
    } finally {
      setSending(false);
      ref.current?.focus();
    }
  }

  function onKeyDown(e: KeyboardEvent<HTMLTextAreaElement>) {
    // An IME (Chinese input) uses Enter to pick a candidate: never send then.
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing && e.keyCode !== 229) {
      e.preventDefault();
      void send();
    }
  }

  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <label className="sr-only" htmlFor={`${hintId}-input`}>
        {t('chat.inputLabel')}
      </label>
      <textarea
        id={`${hintId}-input`}
        ref={ref}
        rows={1}
        value={text}
        maxLength={MAX_TEXT}
        placeholder={t('chat.placeholder')}
        disabled={!ready}
        aria-describedby={hintId}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
        data-testid="chat-input"
      />
      <MicButton active={active} ready={ready} />
      <button
        type="submit"
        className="button button-primary send-button"
        disabled={!ready || sending || text.trim() === ''}
        aria-label={t('chat.send')}
        data-testid="send"
      >
        <SendIcon />
        <span className="send-label">{sending ? t('chat.sending') : t('chat.send')}</span>
      </button>
      <p id={hintId} className="composer-hint muted">
        {hint}
      </p>
    </form>
  );
}
