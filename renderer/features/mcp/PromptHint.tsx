/**
 * The line a permission prompt adds for an imported MCP tool: which MCP server it belongs to and
 * what that server claims about it, worded as a claim ("The server says this only reads"), never
 * as a fact, unless the user trusts the server.
 */
import { useTranslation } from 'react-i18next';
import type { PromptHint as Hint } from '../../../app/contract/index.js';
import { hintPhrases } from './labels.js';

export function PromptHint({ hint }: { hint: Hint | undefined }) {
  const { t } = useTranslation();
  if (!hint) return null;
  const phrases = hintPhrases(t, hint);
  return (
    <p className="mcp-prompt-hint" data-testid="prompt-mcp-hint">
      <span>{t('mcp.hint.from', { server: hint.server })}</span>{' '}
      {phrases.length > 0 && (
        <span data-testid="prompt-mcp-claims">
          {t('mcp.hint.says', { claims: phrases.join(t('mcp.hint.and')) })}{' '}
        </span>
      )}
      <span className="muted">
        {hint.trusted ? t('mcp.hint.trusted') : t('mcp.hint.unverified')}
      </span>
    </p>
  );
}
