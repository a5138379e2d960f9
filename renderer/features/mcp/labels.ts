/** Words for an MCP server's state and a tool's claims, in the current language. */
import type { TFunction } from 'i18next';
import type { McpServerState, McpToolHint, PromptHint } from '../../../app/contract/index.js';
import type { Tone } from '../../components/Badge.js';
import { secondsUntil } from '../../lib/format.js';

export function mcpStateText(t: TFunction, state: McpServerState, now: number): string {
  switch (state.status) {
    case 'ready':
      return t('mcp.state.ready', { count: state.tools });
    case 'failed':
      return t('mcp.state.failed');
    case 'restarting': {
      const seconds = secondsUntil(state.at, now);
      return seconds > 0 ? t('mcp.state.restarting', { seconds }) : t('mcp.state.restartingNow');
    }
    default:
      return t(`mcp.state.${state.status}`);
  }
}

export function mcpStateTone(state: McpServerState): Tone {
  switch (state.status) {
    case 'ready':
      return 'good';
    case 'failed':
      return 'bad';
    case 'stopped':
      return 'neutral';
    default:
      return 'warn';
  }
}

/** What the server claims, as short phrases ("says it only reads"). */
export function hintPhrases(t: TFunction, hint: McpToolHint | PromptHint): string[] {
  const out: string[] = [];
  if (hint.readOnly === true) out.push(t('mcp.hint.readOnly'));
  if (hint.destructive === true) out.push(t('mcp.hint.destructive'));
  else if (hint.readOnly !== true && hint.destructive === false)
    out.push(t('mcp.hint.notDestructive'));
  if (hint.openWorld === true) out.push(t('mcp.hint.openWorld'));
  return out;
}
