/**
 * What the demo servers say when a call did not work, in the words a person would use. The agent
 * tells the server why in a sentence written for the AI model ("… do not retry unless the user
 * asks again"); a real assistant paraphrases that, so the demos do too instead of reading it out.
 * No call ids, no method names, no protocol words: "I didn't get an answer from your computer in
 * time", not "no result for MCP call call_002".
 */

export type DemoLanguage = 'en' | 'zh-CN';

/** The app language as the core reports it; anything else speaks English. */
export function demoLanguage(language: string | undefined): DemoLanguage {
  return language === 'zh-CN' ? 'zh-CN' : 'en';
}

/** Why a call the demo made did not give it a result. */
export type Refusal =
  /** The user said no to the prompt. */
  | 'denied'
  /** Switched off, or set to "Always deny", in the app's Services page. */
  | 'blocked'
  /** The prompt's countdown ran out. */
  | 'timeout'
  /** No window was open to ask the user. */
  | 'unasked'
  /** The demo asked for something the agent could not take (bad params, unknown service). */
  | 'invalid'
  /** What it named is not there (a note that does not exist). */
  | 'missing'
  /** Something by that name is already there (a note file). */
  | 'exists'
  /** The service ran and failed, or anything else. */
  | 'failed';

/**
 * The kind of refusal behind the agent's message for the model (app/dispatch.ts writes those).
 * A real server's AI reads the sentence; the demo recognises the few it needs.
 */
export function refusalOf(message: string | undefined): Refusal {
  const m = message ?? '';
  if (/\bdeclined\b/i.test(m)) return 'denied';
  if (/\bblocked\b|\bswitched off\b/i.test(m)) return 'blocked';
  if (/did not answer the permission request/i.test(m)) return 'timeout';
  if (/no one could be asked|no window is open/i.test(m)) return 'unasked';
  if (/\bdoes not exist\b|\bnot found\b/i.test(m)) return 'missing';
  if (/\balready exists\b/i.test(m)) return 'exists';
  if (/^invalid call\b|there is no service named/i.test(m)) return 'invalid';
  return 'failed';
}

/** What the demo was trying to do, as the end of "so I didn't …". */
export interface Action {
  en: string;
  zh: string;
}

export const ACTIONS = {
  time: { en: 'tell you the time', zh: '告诉你时间' },
  note: { en: 'save the note', zh: '保存这条笔记' },
  listNotes: { en: 'list your notes', zh: '列出你的笔记' },
  readNote: { en: 'read the note', zh: '读这条笔记' },
  timer: { en: 'set the timer', zh: '设置计时器' },
  reminders: { en: 'look at your reminders', zh: '查看你的提醒' },
  open: { en: 'open the page', zh: '打开这个网页' },
} satisfies Record<string, Action>;

/** One short line for a refusal, in the app language. */
export function refusalLine(refusal: Refusal, action: Action, language: DemoLanguage): string {
  if (language === 'zh-CN') {
    switch (refusal) {
      case 'denied':
        return `你没有同意，所以我没有${action.zh}。`;
      case 'blocked':
        return `这项服务在应用的“服务”页里被关闭或禁止了，所以我没有${action.zh}。`;
      case 'timeout':
        return `你没有及时回答，所以我没有${action.zh}。`;
      case 'unasked':
        return `没有打开的窗口可以问你，所以我没有${action.zh}。`;
      case 'invalid':
        return `我的请求有问题，所以没能${action.zh}。`;
      case 'missing':
        return `没找到它，所以没能${action.zh}。`;
      case 'exists':
        return `已经有同名的文件了，所以没能${action.zh}。`;
      case 'failed':
        return `我试着${action.zh}，但没有成功。`;
    }
  }
  switch (refusal) {
    case 'denied':
      return `You said no, so I didn't ${action.en}.`;
    case 'blocked':
      return `That's switched off or blocked in the app's Services page, so I didn't ${action.en}.`;
    case 'timeout':
      return `You didn't answer in time, so I didn't ${action.en}.`;
    case 'unasked':
      return `No window was open to ask you, so I didn't ${action.en}.`;
    case 'invalid':
      return `Something was wrong with my request, so I couldn't ${action.en}.`;
    case 'missing':
      return `I couldn't find it, so I couldn't ${action.en}.`;
    case 'exists':
      return `One by that name is already there, so I couldn't ${action.en}.`;
    case 'failed':
      return `I tried to ${action.en}, but it didn't work.`;
  }
}

/** The call got no result at all: the demo stopped waiting, or the connection went. */
export function noAnswerLine(language: DemoLanguage): string {
  return language === 'zh-CN'
    ? '我没有及时收到你电脑的回复。'
    : "I didn't get an answer from your computer in time.";
}

/** The agent never offered the service this needs. */
export function notOfferedLine(action: Action, language: DemoLanguage): string {
  return language === 'zh-CN'
    ? `我没法${action.zh}：你的电脑没有提供这项服务。`
    : `I can't ${action.en}: your computer hasn't offered that service.`;
}
