/**
 * What an MCP client shows its user when the agent asks through `elicitation/create`: words for
 * people, in the app's language (the gate's refusals are for the model and stay English). The
 * window's own prompt says the same things from the renderer's i18n.
 */
import type { PendingPrompt } from '../contract/policy.js';
import type { AskerAnswer } from '../permissions/broker.js';

interface Words {
  wants: (client: string, title: string, service: string) => string;
  paths: string;
  server: (name: string) => string;
  expires: (seconds: number) => string;
  answer: string;
  choices: Record<ElicitAnswer, string>;
}

const EN: Words = {
  wants: (client, title, service) => `“${client}” wants Advent Agent to run ${title} (${service}).`,
  paths: 'Exactly these paths:',
  server: (name) => `The tool comes from the MCP server “${name}”.`,
  expires: (s) => `Not answering within ${s} s means no.`,
  answer: 'Your answer',
  choices: { once: 'Allow once', deny: 'Deny' },
};

const ZH: Words = {
  wants: (client, title, service) => `“${client}”请求 Advent Agent 运行 ${title}（${service}）。`,
  paths: '涉及的路径：',
  server: (name) => `此工具来自 MCP 服务器“${name}”。`,
  expires: (s) => `${s} 秒内未回答即视为拒绝。`,
  answer: '你的回答',
  choices: { once: '仅允许这一次', deny: '拒绝' },
};

/**
 * What the client's user may answer: allow this one call, or not. The answer comes from the
 * client's own UI, which the agent cannot tell from the client itself, so nothing it says is
 * remembered (the broker narrows any "session" to "once" as well).
 */
export const ELICIT_ANSWERS = ['once', 'deny'] as const satisfies readonly AskerAnswer[];
export type ElicitAnswer = (typeof ELICIT_ANSWERS)[number];

export function wordsFor(language: string): Words {
  return language === 'zh-CN' ? ZH : EN;
}

/** The question's text: which client, which service, what exactly (the preview and the paths). */
export function elicitMessage(
  prompt: PendingPrompt,
  service: { title: string },
  language: string,
  secondsLeft: number,
): string {
  const w = wordsFor(language);
  const lines = [w.wants(prompt.connection.name, service.title || prompt.service, prompt.service)];
  lines.push(prompt.summary);
  if (prompt.resolvedPaths.length) {
    lines.push(w.paths);
    for (const p of prompt.resolvedPaths.slice(0, 20)) lines.push(`  ${p}`);
    if (prompt.resolvedPaths.length > 20) lines.push(`  … (+${prompt.resolvedPaths.length - 20})`);
  }
  if (prompt.hint) lines.push(w.server(prompt.hint.server));
  lines.push(w.expires(Math.max(1, Math.round(secondsLeft))));
  return lines.join('\n');
}

/** The one-field form: a choice of the three answers, titled in the user's language. */
export function elicitSchema(language: string): {
  type: 'object';
  properties: Record<
    string,
    { type: 'string'; title: string; enum: string[]; enumNames: string[] }
  >;
  required: string[];
} {
  const w = wordsFor(language);
  return {
    type: 'object',
    properties: {
      answer: {
        type: 'string',
        title: w.answer,
        enum: [...ELICIT_ANSWERS],
        // The form most clients render (2025-06-18); 2025-11-25 still accepts it.
        enumNames: ELICIT_ANSWERS.map((a) => w.choices[a]),
      },
    },
    required: ['answer'],
  };
}
