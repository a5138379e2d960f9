/**
 * Import MCP servers in one step from what the user already has: Claude Desktop's, Cursor's or
 * VS Code's file, or pasted JSON. The preview says what will be added (and which values become
 * secrets); nothing is saved or started until the user confirms.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type {
  McpImportPreview,
  McpImportRequest,
  McpImportSourceView,
} from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { Badge } from '../../components/Badge.js';
import { useAction } from '../../lib/useAction.js';
import { toast } from '../../store/toasts.js';

export type ImportStart = { kind: 'paste' } | { kind: 'sources' };

export function ImportPanel({ start, onDone }: { start: ImportStart; onDone: () => void }) {
  const { t } = useTranslation();
  const id = useId();
  const { busy, run } = useAction();
  const [json, setJson] = useState('');
  const [path, setPath] = useState('');
  const [sources, setSources] = useState<McpImportSourceView[]>([]);
  const [preview, setPreview] = useState<McpImportPreview | undefined>();
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const pasteRef = useRef<HTMLTextAreaElement>(null);
  const titleRef = useRef<HTMLHeadingElement>(null);

  // The button that opened this panel is disabled while it is open, so the focus comes here: into
  // the box to paste in, or onto the title of the list of files to import from.
  useEffect(() => {
    (start.kind === 'paste' ? pasteRef.current : titleRef.current)?.focus();
  }, [start.kind]);

  useEffect(() => {
    if (start.kind !== 'sources') return;
    void bridge()
      .invoke('listMcpImportSources')
      .then(setSources, () => undefined);
  }, [start.kind]);

  const read = (request: McpImportRequest) =>
    void run(async () => {
      const p = await bridge().invoke('previewMcpImport', request);
      setPreview(p);
      setChosen(new Set(p.servers.map((s) => s.name)));
    });

  const confirm = () =>
    void run(async () => {
      if (!preview) return;
      const saved = await bridge().invoke('confirmMcpImport', preview.id, [...chosen]);
      toast('info', t('mcp.import.done', { count: saved.length }));
      onDone();
    });

  return (
    <section className="card mcp-import" aria-labelledby={`${id}-title`} data-testid="mcp-import">
      <h2 id={`${id}-title`} ref={titleRef} tabIndex={-1}>
        {start.kind === 'paste' ? t('mcp.import.pasteTitle') : t('mcp.import.fromTitle')}
      </h2>
      {!preview && start.kind === 'paste' && (
        <div className="field">
          <label htmlFor={`${id}-json`}>{t('mcp.import.pasteLabel')}</label>
          <textarea
            id={`${id}-json`}
            ref={pasteRef}
            rows={10}
            value={json}
            spellCheck={false}
            className="mono"
            aria-describedby={`${id}-json-help`}
            placeholder={
              '{\n  "mcpServers": {\n    "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/path"] }\n  }\n}'
            }
            onChange={(e) => setJson(e.target.value)}
            data-testid="mcp-import-json"
          />
          <p className="help" id={`${id}-json-help`}>
            {t('mcp.import.pasteHelp')}
          </p>
        </div>
      )}
      {!preview && start.kind === 'sources' && (
        <>
          <ul className="mcp-sources">
            {sources.map((s) => (
              <li key={s.source}>
                <button
                  type="button"
                  className="button"
                  disabled={busy || !s.exists}
                  onClick={() => read({ source: s.source })}
                  data-testid={`mcp-import-${s.source}`}
                >
                  {t(`mcp.import.source.${s.source}`)}
                </button>{' '}
                <code className="small">{s.path}</code>{' '}
                {!s.exists && <span className="muted small">{t('mcp.import.notFound')}</span>}
              </li>
            ))}
          </ul>
          <div className="field">
            <label htmlFor={`${id}-path`}>{t('mcp.import.pathLabel')}</label>
            <input
              id={`${id}-path`}
              value={path}
              spellCheck={false}
              onChange={(e) => setPath(e.target.value)}
              data-testid="mcp-import-path"
            />
          </div>
        </>
      )}
      {preview && (
        <div data-testid="mcp-import-preview">
          <p>{t('mcp.import.previewIntro', { from: preview.from })}</p>
          {preview.servers.length === 0 && <p className="muted">{t('mcp.import.none')}</p>}
          <ul className="mcp-candidates">
            {preview.servers.map((s) => (
              <li key={s.name} data-testid={`mcp-candidate-${s.name}`}>
                <label className="check-label">
                  <input
                    type="checkbox"
                    checked={chosen.has(s.name)}
                    onChange={(e) => {
                      const next = new Set(chosen);
                      if (e.target.checked) next.add(s.name);
                      else next.delete(s.name);
                      setChosen(next);
                    }}
                  />
                  <strong>{s.name}</strong>
                </label>{' '}
                <Badge>{t(`mcp.transport.${s.transport}`)}</Badge>{' '}
                <code className="small">
                  {s.command ? [s.command, ...s.args].join(' ') : s.url}
                </code>
                {s.replaces && (
                  <p className="small text-warn">{t('mcp.import.replaces', { name: s.name })}</p>
                )}
                {(s.secretEnv.length > 0 || s.secretHeaders.length > 0) && (
                  <p className="small muted">
                    {t('mcp.import.secrets', {
                      names: [...s.secretEnv, ...s.secretHeaders].join(', '),
                    })}
                  </p>
                )}
                {s.disabled && <p className="small muted">{t('mcp.import.disabled')}</p>}
                {s.notes.map((n) => (
                  <p key={n} className="small muted">
                    {n}
                  </p>
                ))}
              </li>
            ))}
          </ul>
          {preview.problems.length > 0 && (
            <div className="warning" role="note">
              <p>{t('mcp.import.problems')}</p>
              <ul>
                {preview.problems.map((p) => (
                  <li key={p} className="small">
                    {p}
                  </li>
                ))}
              </ul>
            </div>
          )}
          {preview.servers.length > 0 && (
            <p className="help" data-testid="mcp-import-untrusted">
              {t('mcp.import.untrusted')}
            </p>
          )}
          <p className="help">{t('mcp.import.startsNothing')}</p>
        </div>
      )}
      <div className="form-actions">
        <button type="button" className="button" onClick={onDone} data-testid="mcp-import-cancel">
          {t('common.cancel')}
        </button>
        {!preview ? (
          <button
            type="button"
            className="button button-primary"
            disabled={busy || (start.kind === 'paste' ? !json.trim() : !path.trim())}
            onClick={() => read(start.kind === 'paste' ? { json } : { path: path.trim() })}
            data-testid="mcp-import-read"
          >
            {t('mcp.import.read')}
          </button>
        ) : (
          <button
            type="button"
            className="button button-primary"
            disabled={busy || chosen.size === 0}
            onClick={confirm}
            data-testid="mcp-import-confirm"
          >
            {t('mcp.import.confirm', { count: chosen.size })}
          </button>
        )}
      </div>
    </section>
  );
}
