/**
 * Settings → "Use these services in other apps": for Claude Desktop, Cursor and VS Code, the exact
 * snippet that makes them run this agent as an MCP server (Copy), and "Add to <app>", which shows
 * the change to that app's config file first and writes it only when confirmed (the core keeps a
 * backup and touches no other entry).
 */
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type {
  McpClientApp,
  McpClientSetupPreview,
  McpClientSetupResult,
  McpClientView,
} from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { Badge, type Tone } from '../../components/Badge.js';
import { useDialog } from '../../components/hooks.js';
import { errorText } from '../../lib/labels.js';
import { toast } from '../../store/toasts.js';

/** Brand names: the same in every language. */
const APP_NAMES: Record<McpClientApp, string> = {
  claude: 'Claude Desktop',
  cursor: 'Cursor',
  vscode: 'VS Code',
};

type RowNote =
  { kind: 'done'; result: McpClientSetupResult } | { kind: 'error'; text: string } | undefined;

function stateOf(view: McpClientView): { key: string; tone: Tone } {
  if (!view.installed && !view.exists) return { key: 'notInstalled', tone: 'neutral' };
  switch (view.entry) {
    case 'current':
      return { key: 'current', tone: 'good' };
    case 'different':
      return { key: 'different', tone: 'warn' };
    case 'unreadable':
      return { key: 'unreadable', tone: 'bad' };
    default:
      return { key: 'absent', tone: 'neutral' };
  }
}

export function McpClientsSection() {
  const { t } = useTranslation();
  const id = useId();
  const [views, setViews] = useState<McpClientView[]>([]);
  const [busy, setBusy] = useState<McpClientApp | undefined>();
  const [review, setReview] = useState<McpClientSetupPreview | undefined>();
  const [notes, setNotes] = useState<Partial<Record<McpClientApp, RowNote>>>({});

  const load = useCallback(
    () =>
      bridge()
        .invoke('listMcpClients')
        .then(setViews, () => undefined),
    [],
  );
  useEffect(() => void load(), [load]);

  async function add(app: McpClientApp) {
    setBusy(app);
    setNotes((n) => ({ ...n, [app]: undefined }));
    try {
      setReview(await bridge().invoke('previewMcpClientSetup', app));
    } catch (err) {
      setNotes((n) => ({ ...n, [app]: { kind: 'error', text: errorText(t, err) } }));
    } finally {
      setBusy(undefined);
    }
  }

  async function confirm(preview: McpClientSetupPreview) {
    setBusy(preview.app);
    try {
      const result = await bridge().invoke('applyMcpClientSetup', preview.id);
      setNotes((n) => ({ ...n, [preview.app]: { kind: 'done', result } }));
    } catch (err) {
      setNotes((n) => ({ ...n, [preview.app]: { kind: 'error', text: errorText(t, err) } }));
    } finally {
      setReview(undefined);
      setBusy(undefined);
      void load();
    }
  }

  const unresolved = views.some((v) => !v.resolved);
  return (
    <section
      className="card settings-section"
      aria-labelledby={`${id}-h`}
      data-testid="mcp-clients"
    >
      <h2 id={`${id}-h`}>{t('mcpClients.title')}</h2>
      <p className="help">{t('mcpClients.intro')}</p>
      {unresolved && (
        <p className="warning" role="note" data-testid="mcp-clients-unresolved">
          {t('mcpClients.unresolved')}
        </p>
      )}
      <ul className="mcp-clients">
        {views.map((view) => (
          <ClientRow
            key={view.app}
            view={view}
            busy={busy === view.app}
            note={notes[view.app]}
            onAdd={() => void add(view.app)}
          />
        ))}
      </ul>
      <p className="help">{t('mcpClients.http')}</p>
      {review && (
        <SetupReview
          preview={review}
          busy={busy === review.app}
          onConfirm={() => void confirm(review)}
          onCancel={() => setReview(undefined)}
        />
      )}
    </section>
  );
}

function ClientRow({
  view,
  busy,
  note,
  onAdd,
}: {
  view: McpClientView;
  busy: boolean;
  note: RowNote;
  onAdd: () => void;
}) {
  const { t } = useTranslation();
  const id = useId();
  const snippetRef = useRef<HTMLPreElement>(null);
  const noteRef = useRef<HTMLDivElement>(null);
  const name = APP_NAMES[view.app];
  const state = stateOf(view);

  // After the dialog closes, the outcome is where the keyboard user is.
  useEffect(() => {
    if (note) noteRef.current?.focus();
  }, [note]);

  async function copy() {
    try {
      await navigator.clipboard.writeText(view.snippet);
      toast('success', t('mcpClients.copied'));
    } catch {
      // No clipboard access (an insecure page, a denied permission): selected for Ctrl+C.
      if (snippetRef.current) window.getSelection()?.selectAllChildren(snippetRef.current);
      toast('warn', t('mcpClients.copyFailed'));
    }
  }

  return (
    <li className="mcp-client" data-testid={`mcp-client-${view.app}`} data-entry={view.entry}>
      <div className="mcp-client-head">
        <h3 id={`${id}-name`}>{name}</h3>
        <Badge tone={state.tone} testId={`mcp-client-state-${view.app}`}>
          {t(`mcpClients.state.${state.key}` as 'mcpClients.state.absent')}
        </Badge>
      </div>
      <p className="small muted">
        {t('mcpClients.file')}:{' '}
        <code data-testid={`mcp-client-path-${view.app}`}>{view.configPath}</code>
      </p>
      <pre ref={snippetRef} className="mcp-snippet" data-testid={`mcp-client-snippet-${view.app}`}>
        {view.snippet}
      </pre>
      <div className="mcp-client-actions">
        <button
          type="button"
          id={`${id}-copy`}
          className="button button-small"
          aria-labelledby={`${id}-copy ${id}-name`}
          onClick={() => void copy()}
          data-testid={`mcp-client-copy-${view.app}`}
        >
          {t('mcpClients.copy')}
        </button>
        <button
          type="button"
          className="button button-small button-primary"
          disabled={busy || !view.installed || view.entry === 'current'}
          onClick={onAdd}
          data-testid={`mcp-client-add-${view.app}`}
        >
          {view.entry === 'different'
            ? t('mcpClients.update', { app: name })
            : t('mcpClients.add', { app: name })}
        </button>
      </div>
      {note?.kind === 'error' && (
        <div
          ref={noteRef}
          tabIndex={-1}
          className="field-error"
          role="alert"
          data-testid={`mcp-client-error-${view.app}`}
        >
          {note.text}
        </div>
      )}
      {note?.kind === 'done' && (
        <div
          ref={noteRef}
          tabIndex={-1}
          className="mcp-client-done"
          role="status"
          data-testid={`mcp-client-done-${view.app}`}
        >
          <p>
            {note.result.changed
              ? t('mcpClients.done', { app: name })
              : t('mcpClients.unchanged', { app: name })}
          </p>
          {note.result.backupPath && (
            <p className="small">
              {t('mcpClients.backup')}{' '}
              <code data-testid={`mcp-client-backup-${view.app}`}>{note.result.backupPath}</code>
            </p>
          )}
        </div>
      )}
    </li>
  );
}

/** The change to the app's file, as a dialog: Confirm writes it, Cancel or Esc leaves it. */
function SetupReview({
  preview,
  busy,
  onConfirm,
  onCancel,
}: {
  preview: McpClientSetupPreview;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  const id = useId();
  const ref = useRef<HTMLDivElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const name = APP_NAMES[preview.app];
  useDialog(ref, cancelRef, onCancel);

  const intro = preview.creates
    ? 'mcpClients.reviewCreate'
    : preview.change === 'replace'
      ? 'mcpClients.reviewReplace'
      : preview.change === 'none'
        ? 'mcpClients.reviewNone'
        : 'mcpClients.reviewAdd';
  return (
    <div className="modal-backdrop">
      <div
        ref={ref}
        className="modal modal-wide"
        role="dialog"
        aria-modal="true"
        aria-labelledby={`${id}-title`}
        aria-describedby={`${id}-intro`}
        data-testid="mcp-client-review"
      >
        <header className="modal-head">
          <h2 id={`${id}-title`}>
            {preview.change === 'replace'
              ? t('mcpClients.update', { app: name })
              : t('mcpClients.add', { app: name })}
          </h2>
        </header>
        <div className="modal-body">
          <p id={`${id}-intro`}>{t(intro, { path: preview.configPath })}</p>
          {preview.diff.length > 0 && (
            <figure className="diff-figure" aria-labelledby={`${id}-changes`}>
              <figcaption id={`${id}-changes`} className="sr-only">
                {t('mcpClients.changes')}
              </figcaption>
              <pre className="diff" data-testid="mcp-client-diff">
                {preview.diff.map((line, i) =>
                  line.op === 'skip' ? (
                    <span key={i} className="diff-line diff-skip">
                      {t('mcpClients.skipped', { count: line.count })}
                    </span>
                  ) : (
                    <span key={i} className={`diff-line diff-${line.op}`} data-op={line.op}>
                      {line.op === 'add' ? '+ ' : line.op === 'del' ? '− ' : '  '}
                      {line.text}
                    </span>
                  ),
                )}
              </pre>
            </figure>
          )}
          {preview.masked && (
            <p className="help" data-testid="mcp-client-masked">
              {t('mcpClients.masked')}
            </p>
          )}
        </div>
        <footer className="modal-actions">
          <span className="spacer" />
          <button
            ref={cancelRef}
            type="button"
            className="button"
            onClick={onCancel}
            data-testid="mcp-client-cancel"
          >
            {preview.change === 'none' ? t('common.close') : t('common.cancel')}
          </button>
          {preview.change !== 'none' && (
            <button
              type="button"
              className="button button-primary"
              disabled={busy}
              onClick={onConfirm}
              data-testid="mcp-client-confirm"
            >
              {t('mcpClients.confirm')}
            </button>
          )}
        </footer>
      </div>
    </div>
  );
}
