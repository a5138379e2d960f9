/**
 * What the gate told the server (the AI model) about a refusal: written for the model ("… do not
 * retry unless the user asks again"), so people see it only on request, folded under a short
 * human line. Its language is the core's (English), marked so screen readers read it so.
 */
import { useTranslation } from 'react-i18next';

export function ModelMessage({
  message,
  testId,
  summary,
}: {
  message: string;
  testId?: string;
  /** Where a label already says what this is (a field name), a shorter disclosure. */
  summary?: string;
}) {
  const { t } = useTranslation();
  return (
    <details className="model-text" data-testid={testId}>
      <summary>{summary ?? t('refusal.serverWasTold')}</summary>
      <p lang="en">{message}</p>
    </details>
  );
}
