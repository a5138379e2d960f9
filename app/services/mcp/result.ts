/**
 * A tool result as the voice servers get it: text. Text blocks are joined; images, audio and
 * resources are described in words (never dropped silently: the model should know there was a
 * picture it cannot see); `structuredContent` stands in as JSON when there is no text. The whole
 * is cut to MCP_RESULT_BYTES with a note, so it fits every dialect.
 */
import { cutText } from '../../wire/kit/mcp-server.js';
import { MCP_LIMITS, MCP_RESULT_BYTES, depthExceeds } from './limits.js';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Bytes a base64 string decodes to, without decoding it. */
function base64Bytes(data: string): number {
  const pad = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - pad);
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** One content block in words. */
export function describeBlock(block: unknown): string {
  if (!isRecord(block)) return '[content the agent cannot read]';
  switch (block.type) {
    case 'text':
      return str(block.text) ?? '';
    case 'image':
    case 'audio': {
      const mime = str(block.mimeType) ?? 'unknown type';
      const size = str(block.data) ? `, ${formatBytes(base64Bytes(block.data as string))}` : '';
      return `[${block.type} (${mime}${size}) not shown: voice servers receive text only]`;
    }
    case 'resource_link': {
      const name = str(block.name) ?? str(block.title);
      const uri = str(block.uri) ?? '?';
      const mime = str(block.mimeType);
      return `[link to a resource: ${name ? `${name} ` : ''}${uri}${mime ? ` (${mime})` : ''}]`;
    }
    case 'resource': {
      const r = isRecord(block.resource) ? block.resource : {};
      const uri = str(r.uri) ?? '?';
      const mime = str(r.mimeType);
      if (typeof r.text === 'string')
        return `[resource ${uri}${mime ? ` (${mime})` : ''}]\n${r.text}`;
      const size = str(r.blob) ? `, ${formatBytes(base64Bytes(r.blob as string))}` : '';
      return `[resource ${uri} (${mime ?? 'binary'}${size}) not shown: voice servers receive text only]`;
    }
    default:
      return `[${String(block.type).slice(0, 40)} content not shown]`;
  }
}

export interface ToolResultText {
  text: string;
  isError: boolean;
  structuredContent?: Record<string, unknown>;
}

/** The text of a `tools/call` result, cut to fit every voice server. */
export function resultText(result: unknown, maxBytes = MCP_RESULT_BYTES): ToolResultText {
  const r = isRecord(result) ? result : {};
  const blocks = Array.isArray(r.content) ? r.content : [];
  const parts: string[] = [];
  let chars = 0;
  for (const block of blocks.slice(0, MCP_LIMITS.contentBlocks)) {
    if (chars > MCP_LIMITS.resultTextChars) break;
    const part = describeBlock(block);
    if (part === '') continue;
    parts.push(part);
    chars += part.length;
  }
  if (blocks.length > MCP_LIMITS.contentBlocks)
    parts.push(`[${blocks.length - MCP_LIMITS.contentBlocks} more content blocks not shown]`);
  const { structured, note } = boundedStructure(r.structuredContent);
  // First, so it survives the text being cut.
  if (note) parts.unshift(note);
  else if (!blocks.some((b) => isRecord(b) && b.type === 'text') && structured)
    parts.push(structured.json.slice(0, MCP_LIMITS.resultTextChars));
  let text = parts.join('\n').slice(0, MCP_LIMITS.resultTextChars);
  if (text === '') text = r.isError === true ? 'the tool failed and gave no reason' : '(no output)';
  return {
    text: cutText(text, maxBytes),
    isError: r.isError === true,
    ...(structured ? { structuredContent: structured.value } : {}),
  };
}

/**
 * `structuredContent` within the bounds the text has (MCP_LIMITS): passed on whole or not at all.
 * Too deep, it would overflow the stack of every JSON.stringify after us (an MCP client of ours
 * never got its answer); too large, it would reach every client whole while the text is cut.
 */
function boundedStructure(value: unknown): {
  structured?: { value: Record<string, unknown>; json: string };
  note?: string;
} {
  if (!isRecord(value)) return {};
  // Checked without recursion before anything stringifies it.
  if (depthExceeds(value, MCP_LIMITS.resultDepth))
    return {
      note: `[the tool's structured result is not passed on: it nests deeper than ${MCP_LIMITS.resultDepth} levels]`,
    };
  const json = JSON.stringify(value);
  if (json.length > MCP_LIMITS.resultTextChars)
    return {
      note: `[the tool's structured result is not passed on: it is ${formatBytes(json.length)} of JSON, over the ${formatBytes(MCP_LIMITS.resultTextChars)} a result may have]`,
    };
  return { structured: { value, json } };
}
