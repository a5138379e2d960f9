/** "Try it": a form generated from the service's parameter schema; runs it as the user. */
import { type FormEvent, useId, useMemo, useState } from 'react';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import type { RunResult, ServiceView } from '../../../app/contract/index.js';
import { bridge } from '../../bridge/current.js';
import { prettyJson } from '../../lib/format.js';
import { paramHelp } from '../../i18n/service-text.js';
import { errorCodeText, errorText } from '../../lib/labels.js';
import { useUi } from '../../store/ui.js';
import {
  collectParams,
  type Field,
  type FieldProblem,
  fieldsOf,
  type FormValues,
  initialValues,
} from './schemaForm.js';

function FieldInput({
  field,
  value,
  onChange,
  id,
  describedBy,
  invalid,
  testId,
}: {
  field: Field;
  value: string | boolean | undefined;
  onChange: (v: string | boolean) => void;
  id: string;
  describedBy?: string;
  invalid: boolean;
  testId: string;
}) {
  const { t } = useTranslation();
  const common = {
    id,
    'aria-describedby': describedBy,
    'aria-invalid': invalid || undefined,
    'data-testid': testId,
  };
  switch (field.kind) {
    case 'checkbox':
      return (
        <input
          {...common}
          type="checkbox"
          checked={value === true}
          onChange={(e) => onChange(e.target.checked)}
        />
      );
    case 'select':
      return (
        <select
          {...common}
          value={typeof value === 'string' ? value : ''}
          required={field.required}
          onChange={(e) => onChange(e.target.value)}
        >
          {!field.required && <option value="">{t('services.unset')}</option>}
          {field.options?.map((o, i) => (
            <option key={String(o)} value={String(i)} translate="no">
              {String(o)}
            </option>
          ))}
        </select>
      );
    case 'number':
      return (
        <input
          {...common}
          type="number"
          inputMode={field.integer ? 'numeric' : 'decimal'}
          step={field.integer ? 1 : 'any'}
          min={field.min}
          max={field.max}
          required={field.required}
          value={typeof value === 'string' ? value : ''}
          onChange={(e) => onChange(e.target.value)}
        />
      );
    case 'textarea':
    case 'json':
      return (
        <textarea
          {...common}
          rows={field.kind === 'json' ? 4 : 5}
          className={field.kind === 'json' ? 'mono' : undefined}
          required={field.required}
          maxLength={field.maxLength}
          spellCheck={field.kind !== 'json'}
          value={typeof value === 'string' ? value : ''}
          onChange={(e) => onChange(e.target.value)}
        />
      );
    default:
      return (
        <input
          {...common}
          type="text"
          required={field.required}
          minLength={field.minLength}
          maxLength={field.maxLength}
          autoComplete="off"
          spellCheck={false}
          value={typeof value === 'string' ? value : ''}
          onChange={(e) => onChange(e.target.value)}
        />
      );
  }
}

function problemText(t: TFunction, p: FieldProblem): string {
  const name = p.field;
  switch (p.kind) {
    case 'required':
      return t('services.isRequired', { name });
    case 'number':
      return t('services.notNumber', { name });
    case 'integer':
      return t('services.notInteger', { name });
    case 'json':
      return `${name}: ${t('services.invalidJson')}`;
    case 'min':
      return t('services.tooSmall', { name, min: p.min });
    case 'max':
      return t('services.tooLarge', { name, max: p.max });
  }
}

export function SchemaForm({ service }: { service: ServiceView }) {
  const { t, i18n } = useTranslation();
  const base = useId();
  const fields = useMemo(() => fieldsOf(service.parameters), [service.parameters]);
  const [values, setValues] = useState<FormValues>(() => initialValues(fields));
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<RunResult | { ok: false; code: ''; message: string }>();
  const openAudit = useUi((s) => s.openAudit);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const { params, problems: found } = collectParams(fields, values);
    setProblems(found);
    if (found.length > 0) return;
    setRunning(true);
    setResult(undefined);
    try {
      setResult(await bridge().invoke('runService', service.name, params));
    } catch (err) {
      setResult({ ok: false, code: '', message: errorText(t, err) });
    } finally {
      setRunning(false);
    }
  }

  const resultData =
    result?.ok === true
      ? typeof result.data === 'string'
        ? result.data
        : prettyJson(result.data)
      : undefined;

  return (
    <form
      className="schema-form"
      onSubmit={submit}
      noValidate
      data-testid={`service-form-${service.name}`}
    >
      <p className="muted small">{t('services.tryItHint')}</p>
      {fields.length === 0 && <p className="muted">{t('services.noParams')}</p>}
      {fields.map((f) => {
        const id = `${base}-${f.name}`;
        const help = paramHelp(i18n.language, service.name, f.name, f.description);
        const helpId = help ? `${id}-help` : undefined;
        const problem = problems.find((p) => p.field === f.name);
        const errId = problem ? `${id}-err` : undefined;
        const describedBy = [helpId, errId].filter(Boolean).join(' ') || undefined;
        const label = (
          <>
            <code translate="no">{f.title ?? f.name}</code>
            {f.required ? (
              <span className="required" title={t('common.required')}>
                <span aria-hidden="true"> *</span>
                <span className="sr-only"> ({t('common.required')})</span>
              </span>
            ) : (
              <span className="muted small"> ({t('common.optional')})</span>
            )}
          </>
        );
        const input = (
          <FieldInput
            field={f}
            id={id}
            value={values[f.name]}
            describedBy={describedBy}
            invalid={!!problem}
            testId={`field-${service.name}-${f.name}`}
            onChange={(v) => setValues((old) => ({ ...old, [f.name]: v }))}
          />
        );
        return (
          <div className={`field${f.kind === 'checkbox' ? ' field-check' : ''}`} key={f.name}>
            {f.kind === 'checkbox' ? (
              <label htmlFor={id} className="check-label">
                {input}
                <span>{label}</span>
              </label>
            ) : (
              <>
                <label htmlFor={id}>{label}</label>
                {input}
              </>
            )}
            {help && (
              <p id={helpId} className="help">
                {help}
              </p>
            )}
            {problem && (
              <p id={errId} className="field-error" role="alert">
                {problemText(t, problem)}
              </p>
            )}
          </div>
        );
      })}
      <div className="form-actions">
        <button
          type="submit"
          className="button button-primary"
          disabled={running}
          data-testid={`service-run-${service.name}`}
        >
          {running ? t('services.running') : t('services.run')}
        </button>
      </div>
      <div aria-live="polite" data-testid={`service-result-${service.name}`}>
        {result && (
          <div className={`run-result ${result.ok ? 'run-ok' : 'run-error'}`} data-ok={result.ok}>
            <div className="run-result-head">
              <strong>{result.ok ? t('services.result') : t('services.failed')}</strong>
              {!result.ok && result.code && <span> · {errorCodeText(t, result.code)}</span>}
              {'auditSeq' in result && result.auditSeq !== undefined && (
                <button
                  type="button"
                  className="link-button"
                  aria-label={t('tool.auditLabel', { seq: result.auditSeq })}
                  data-testid={`service-result-audit-${service.name}`}
                  onClick={() =>
                    openAudit({ seq: result.auditSeq as number, service: service.name })
                  }
                >
                  {t('tool.audit', { seq: result.auditSeq })}
                </button>
              )}
            </div>
            {result.ok ? (
              <pre translate="no">{resultData}</pre>
            ) : result.code ? (
              // The user ran it: no server was told anything, and no prompt or policy stood in the
              // way, so the message is the reason itself ("unknown time zone…"). Shown, not folded.
              <p lang="en" data-testid={`service-result-message-${service.name}`}>
                {result.message}
              </p>
            ) : (
              <p>{result.message}</p>
            )}
          </div>
        )}
      </div>
    </form>
  );
}
