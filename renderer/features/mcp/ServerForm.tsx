/**
 * Add or edit one MCP server by hand: a program to run (command, arguments, environment) or an
 * address (URL, headers). A variable or header marked secret is kept with the other secrets,
 * never in the settings file; editing leaves a saved secret as it is unless a new value is typed.
 */
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { McpServerInput, McpServerView, McpTransport } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { useAction } from '../../lib/useAction.js';
import { toast } from '../../store/toasts.js';

interface Row {
  name: string;
  value: string;
  secret: boolean;
}

function rowsOf(values: Record<string, string>, secrets: string[]): Row[] {
  return [
    ...Object.entries(values).map(([name, value]) => ({ name, value, secret: false })),
    ...secrets.map((name) => ({ name, value: '', secret: true })),
  ];
}

function Pairs({
  legend,
  rows,
  onChange,
  testId,
  savedSecrets,
}: {
  legend: string;
  rows: Row[];
  onChange: (rows: Row[]) => void;
  testId: string;
  savedSecrets: string[];
}) {
  const { t } = useTranslation();
  const set = (i: number, patch: Partial<Row>) =>
    onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset data-testid={testId}>
      <legend>{legend}</legend>
      {rows.map((r, i) => (
        <div className="mcp-pair" key={i}>
          <input
            aria-label={t('mcp.form.pairName')}
            value={r.name}
            spellCheck={false}
            onChange={(e) => set(i, { name: e.target.value })}
            data-testid={`${testId}-name-${i}`}
          />
          <input
            aria-label={t('mcp.form.pairValue')}
            type={r.secret ? 'password' : 'text'}
            value={r.value}
            spellCheck={false}
            autoComplete="off"
            placeholder={
              r.secret && savedSecrets.includes(r.name) ? t('mcp.form.secretKept') : undefined
            }
            onChange={(e) => set(i, { value: e.target.value })}
            data-testid={`${testId}-value-${i}`}
          />
          <label className="check-label">
            <input
              type="checkbox"
              checked={r.secret}
              onChange={(e) => set(i, { secret: e.target.checked })}
            />
            {t('mcp.form.secret')}
          </label>
          <button
            type="button"
            className="button button-small button-danger-quiet"
            aria-label={t('mcp.form.removePair', { name: r.name || '…' })}
            onClick={() => onChange(rows.filter((_, j) => j !== i))}
          >
            {t('common.remove')}
          </button>
        </div>
      ))}
      <button
        type="button"
        className="link-button"
        onClick={() => onChange([...rows, { name: '', value: '', secret: false }])}
      >
        {t('mcp.form.addPair')}
      </button>
    </fieldset>
  );
}

export function ServerForm({ server, onDone }: { server?: McpServerView; onDone: () => void }) {
  const { t } = useTranslation();
  const id = useId();
  const { busy, run } = useAction();
  const [name, setName] = useState(server?.name ?? '');
  const [transport, setTransport] = useState<McpTransport>(server?.transport ?? 'stdio');
  const [command, setCommand] = useState(server?.command ?? '');
  const [args, setArgs] = useState((server?.args ?? []).join('\n'));
  const [cwd, setCwd] = useState(server?.cwd ?? '');
  const [url, setUrl] = useState(server?.url ?? '');
  const [env, setEnv] = useState<Row[]>(rowsOf(server?.env ?? {}, server?.secretEnv ?? []));
  const [headers, setHeaders] = useState<Row[]>(
    rowsOf(server?.headers ?? {}, server?.secretHeaders ?? []),
  );
  const [timeoutSec, setTimeoutSec] = useState(String(server?.timeoutSec ?? 60));
  const [error, setError] = useState<string | undefined>();
  const nameRef = useRef<HTMLInputElement>(null);

  // "Add server" is disabled while this form is open, and "Edit" is further down the page: the
  // focus comes to the first field either way.
  useEffect(() => {
    nameRef.current?.focus();
  }, []);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const timeout = Number(timeoutSec);
    if (!name.trim()) return setError(t('mcp.form.nameRequired'));
    if (transport === 'stdio' && !command.trim()) return setError(t('mcp.form.commandRequired'));
    if (transport !== 'stdio' && !/^https?:\/\//i.test(url.trim()))
      return setError(t('mcp.form.urlRequired'));
    if (!Number.isInteger(timeout) || timeout < 1 || timeout > 3600)
      return setError(t('mcp.form.timeoutRange'));
    setError(undefined);
    const pairs = (rows: Row[]) => {
      const kept = rows.filter((r) => r.name.trim());
      return {
        values: Object.fromEntries(
          kept.filter((r) => r.value !== '').map((r) => [r.name.trim(), r.value]),
        ),
        secrets: kept.filter((r) => r.secret).map((r) => r.name.trim()),
      };
    };
    const e2 = pairs(env);
    const h = pairs(headers);
    const input: McpServerInput = {
      ...(server ? { id: server.id } : {}),
      name: name.trim(),
      transport,
      ...(transport === 'stdio'
        ? {
            command: command.trim(),
            args: args.split('\n').filter((a) => a !== ''),
            ...(cwd.trim() ? { cwd: cwd.trim() } : {}),
            env: e2.values,
            secretEnv: e2.secrets,
          }
        : {
            url: url.trim(),
            fixedTransport: transport === 'sse' ? true : undefined,
            headers: h.values,
            secretHeaders: h.secrets,
          }),
      trusted: server?.trusted,
      policy: server?.policy,
      timeoutSec: timeout,
      disabled: server ? !server.enabled : undefined,
    };
    void run(async () => {
      await bridge().invoke('saveMcpServer', input);
      toast('info', t('mcp.form.saved', { name: input.name }));
      onDone();
    });
  };

  return (
    <form
      className="card mcp-form"
      aria-labelledby={`${id}-title`}
      onSubmit={submit}
      noValidate
      data-testid="mcp-form"
    >
      <h2 id={`${id}-title`}>
        {server ? t('mcp.form.editTitle', { name: server.name }) : t('mcp.form.newTitle')}
      </h2>
      <div className="form-grid">
        <div className="field">
          <label htmlFor={`${id}-name`}>{t('mcp.form.name')}</label>
          <input
            id={`${id}-name`}
            ref={nameRef}
            value={name}
            maxLength={64}
            required
            onChange={(e) => setName(e.target.value)}
            data-testid="mcp-form-name"
          />
        </div>
        <div className="field">
          <label htmlFor={`${id}-transport`}>{t('mcp.form.transport')}</label>
          <select
            id={`${id}-transport`}
            value={transport}
            onChange={(e) => setTransport(e.target.value as McpTransport)}
            data-testid="mcp-form-transport"
          >
            {(['stdio', 'http', 'sse'] as const).map((k) => (
              <option key={k} value={k}>
                {t(`mcp.transport.${k}`)}
              </option>
            ))}
          </select>
        </div>
        {transport === 'stdio' ? (
          <>
            <div className="field">
              <label htmlFor={`${id}-command`}>{t('mcp.form.command')}</label>
              <input
                id={`${id}-command`}
                value={command}
                spellCheck={false}
                placeholder="npx"
                onChange={(e) => setCommand(e.target.value)}
                data-testid="mcp-form-command"
              />
            </div>
            <div className="field">
              <label htmlFor={`${id}-cwd`}>{t('mcp.form.cwd')}</label>
              <input
                id={`${id}-cwd`}
                value={cwd}
                spellCheck={false}
                onChange={(e) => setCwd(e.target.value)}
              />
            </div>
          </>
        ) : (
          <div className="field">
            <label htmlFor={`${id}-url`}>{t('mcp.form.url')}</label>
            <input
              id={`${id}-url`}
              value={url}
              spellCheck={false}
              placeholder="https://example.com/mcp"
              onChange={(e) => setUrl(e.target.value)}
              data-testid="mcp-form-url"
            />
          </div>
        )}
        <div className="field">
          <label htmlFor={`${id}-timeout`}>{t('mcp.form.timeout')}</label>
          <input
            id={`${id}-timeout`}
            inputMode="numeric"
            value={timeoutSec}
            onChange={(e) => setTimeoutSec(e.target.value)}
          />
        </div>
      </div>
      {transport === 'stdio' && (
        <div className="field">
          <label htmlFor={`${id}-args`}>{t('mcp.form.args')}</label>
          <textarea
            id={`${id}-args`}
            rows={3}
            className="mono"
            value={args}
            spellCheck={false}
            aria-describedby={`${id}-args-help`}
            onChange={(e) => setArgs(e.target.value)}
            data-testid="mcp-form-args"
          />
          <p className="help" id={`${id}-args-help`}>
            {t('mcp.form.argsHelp')}
          </p>
        </div>
      )}
      {transport === 'stdio' ? (
        <Pairs
          legend={t('mcp.form.env')}
          rows={env}
          onChange={setEnv}
          testId="mcp-form-env"
          savedSecrets={server?.secretEnv ?? []}
        />
      ) : (
        <Pairs
          legend={t('mcp.form.headers')}
          rows={headers}
          onChange={setHeaders}
          testId="mcp-form-headers"
          savedSecrets={server?.secretHeaders ?? []}
        />
      )}
      <p className="help">{t('mcp.form.secretHelp')}</p>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      <div className="form-actions">
        <button type="button" className="button" onClick={onDone}>
          {t('common.cancel')}
        </button>
        <button
          type="submit"
          className="button button-primary"
          disabled={busy}
          data-testid="mcp-form-save"
        >
          {busy ? t('common.saving') : t('common.save')}
        </button>
      </div>
    </form>
  );
}
