/**
 * The core names and describes its services in English: ServiceView.title and .summary, the
 * parameters' help in their schema, and each call's plain-words sentence (the prompt's summary).
 * English is that text itself, so nothing here copies it (a copy would drift from the core);
 * what is here are the translations, by service name, for the services the UI knows. A service it
 * does not know (a new built-in, an imported MCP tool) shows the core's own words.
 *
 * A call's sentence is translated from the core's own sentence, never rebuilt from the params:
 * what the user approves is what the core's preview found (the file as resolved, its size, the
 * reminder an id names, who receives the data), and only the core knows that. Each translation
 * reads the facts out of the English by its exact shape and puts them, unchanged, into the
 * Chinese; a sentence of another shape (a newer core, a preview that failed and fell back to the
 * params) stays English rather than be guessed at.
 */

interface Call {
  /** The connection's name as the prompt knows it (a tool card knows only its id). */
  recipient?: string;
}

interface ServiceWords {
  title: string;
  summary: string;
  /** Help for the Try it fields, by parameter name. */
  params?: Record<string, string>;
  /** A call in this language from the core's English sentence; undefined for another shape. */
  sentence?: (core: string, call: Call) => string | undefined;
}

// Shapes of the facts the core writes (app/services): a size by formatBytes, a time by
// describeDue, a length by describeDuration. Anything a server chose (a path, a quoted text) is
// matched greedily before a fixed tail, so text that imitates the tail stays inside the quote.
const SIZE = String.raw`\d+(?:\.\d)? (?:B|KB|MB|GB|TB)`;
const DUE = String.raw`(?:tomorrow |\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}(?::\d{2})?`;
const UNIT = String.raw`\d+ (?:day|hour|minute|second)s?`;
const DURATION = `${UNIT}(?: ${UNIT})?`;

const shape = (source: string): RegExp => new RegExp(`^${source}$`, 's');

const ZH_UNITS: Record<string, string> = { day: '天', hour: '小时', minute: '分钟', second: '秒' };

/** "1 minute 30 seconds" → "1 分钟 30 秒". */
const zhDuration = (english: string): string =>
  english.replace(
    /(\d+) (day|hour|minute|second)s?/g,
    (_, n: string, unit: string) => `${n} ${ZH_UNITS[unit]}`,
  );

/** "14:30" is today's; "tomorrow 09:00"; a later day as its date (spaced from the word before). */
const zhDue = (english: string): string =>
  english.startsWith('tomorrow ')
    ? `明天 ${english.slice('tomorrow '.length)}`
    : /^\d{2}:/.test(english)
      ? `今天 ${english}`
      : ` ${english}`;

/**
 * Where the data goes, from the tail of a "Send … to X" / "Show … here" sentence. Undefined when
 * the name there is not the asking connection's (a path or quote made to look like the tail).
 */
function delivered(core: string, call: Call): { body: string; to?: string } | undefined {
  const shown = /^Show (.+) here$/s.exec(core);
  if (shown) return { body: shown[1]! };
  const sent = /^Send (.+) to (.+)$/s.exec(core);
  if (!sent) return undefined;
  let [, body, to] = sent as unknown as [string, string, string];
  if (call.recipient !== undefined) {
    const tail = ` to ${call.recipient}`;
    if (!core.endsWith(tail)) return undefined;
    body = core.slice('Send '.length, -tail.length);
    to = call.recipient;
  }
  return { body, to };
}

/** "把 X 发送给 Y" or "在这里显示 X", for a delivered body. */
const zhDelivery = (what: string, to: string | undefined): string =>
  to === undefined ? `在这里显示${what}` : `把${what}发送给 ${to}`;

/** The facts of `core` by `pattern`, or undefined when it is of another shape. */
function facts(core: string, pattern: RegExp): (string | undefined)[] | undefined {
  const m = pattern.exec(core);
  return m ? m.slice(1) : undefined;
}

const CREATE_FILE = shape(`(Create|Replace) file (.+) \\((${SIZE})\\) in (.+)`);
const CURRENT_TIME = shape(`Read the current time \\((.+)\\)`);
const SET_TIMER = shape(`Set a timer for (${DURATION})(?:: (“.*”))?`);
const SET_REMINDER = shape(`Remind you at (${DUE}): (“.*”)`);
const LIST_REMINDERS = shape(`Read your reminders and timers \\((\\d+) waiting\\)`);
const CANCEL_REMINDER = shape(
  `Cancel the (timer|reminder)(?: (“.*”))? set for (${DUE})( \\(one you set yourself\\))?`,
);
const LIST_DIRECTORY = shape(`the list of (.+) \\((\\d+) entr(?:y|ies)\\)`);
const READ_FILE = shape(`the contents of (.+) \\((${SIZE})\\)`);
// The tail (what is sent, to whom) is matched from the end; the names and text are quoted by
// the core, and "containing" is there exactly when lines are sent.
const SEARCH_FILES = shape(
  `Search (.+?) for ((?:all names|names like ').*); (send|show) the (matching paths(?: and lines)?) (here|to .+)`,
);
const SEARCH_NAMES = shape(`(all names|names like '.*')`);
const SEARCH_NAMES_AND_TEXT = shape(`(all names|names like '.*') containing ('.*')`);
const FILE_INFO = shape(`the kind, size and date of (?:the folder (.+)|(.+))`);
const OPEN_URL = shape(`Open (\\S+) in your web browser`);
const LIST_APPS = shape(`List the installed apps(?: matching (“.*”))?`);
// The app's name is matched lazily and the warning tails before the end of the command: the
// command that runs is never shown shorter than the core shows it, and a warning never lost.
// The tails: its launcher, then the program or argument it runs, each in a writable folder.
const OPEN_APP = shape(
  `Open the app (“.*?”) \\((.+?)\\): runs (.+?)(?:; careful: its launcher (.+?) is in a folder the servers can write to)?(?:; careful: its (program|argument) (.+) is in a folder the servers can write to)?`,
);
const READ_CLIPBOARD = shape(`Send the text on your clipboard to (.+)`);
const WRITE_CLIPBOARD = shape(
  `Replace your clipboard with (“.*”) \\((\\d+) characters?(?:, (\\d+) lines)?(?:; careful: (\\d+) invisible or direction-changing characters?)?\\)`,
);
const DEVICE_STATUS =
  "Read this computer's status (system, battery, volume, network, time zone, language)";
const SET_VOLUME = shape(
  `(?:(Mute|Unmute) the sound(?: and set the volume to (\\d+)%)?|Set the volume to (\\d+)%)`,
);
const SCREENSHOT_VISION = shape(
  `Capture your screen and send it with the question (“.*”) to (.+)'s vision service \\(([^()]+)\\)`,
);
const SCREENSHOT_IMAGE = shape(`Capture your screen and send the picture to (.+)`);
const SCREENSHOT_LOCAL = 'Capture your screen (the picture stays on this computer)';

/** A name the core wrote as the receiver, if it is the asking connection's (when that is known). */
const receiver = (name: string | undefined, call: Call): string | undefined =>
  name !== undefined && (call.recipient === undefined || call.recipient === name)
    ? name
    : undefined;

const ZH_CN: Record<string, ServiceWords> = {
  create_file: {
    title: '创建文件',
    summary: '在你允许的文件夹中新建文本文件；替换已有文件会另外询问。',
    params: {
      filename: '文件路径，相对于允许的文件夹，例如 notes/todo.txt',
      content: '要写入文件的文本（UTF-8）',
      overwrite: '勾选后可替换已存在的文件（会先询问你）',
    },
    sentence: (core) => {
      const f = facts(core, CREATE_FILE);
      if (!f) return undefined;
      const [verb, file, size, root] = f;
      return verb === 'Replace'
        ? `替换 ${root} 中的文件 ${file}（${size}），原有内容会丢失`
        : `在 ${root} 中新建文件 ${file}（${size}）`;
    },
  },
  get_current_time: {
    title: '当前时间',
    summary: '告诉你当前的日期和时间，可按任意时区。',
    params: {
      format: 'simple：“年-月-日 时:分:秒”；detailed：ISO 时间、日期、星期、时区和 UTC 偏移',
      timezone: 'IANA 时区，例如 Asia/Shanghai；默认为你所在的时区',
    },
    sentence: (core) => {
      const f = facts(core, CURRENT_TIME);
      return f && `读取当前时间（${f[0]}）`;
    },
  },
  set_timer: {
    title: '计时器',
    summary: '在一段时间后提醒你，到时会显示并朗读。',
    params: {
      duration_seconds: '计时的秒数，例如 300 即五分钟',
      label: '计时器的用途，一行文字，到时会朗读，例如“泡茶”（换行和控制字符会被去掉）',
    },
    sentence: (core) => {
      const f = facts(core, SET_TIMER);
      if (!f) return undefined;
      const [duration, label] = f;
      return `设置 ${zhDuration(duration!)}的计时器${label ? `：${label}` : ''}`;
    },
  },
  set_reminder: {
    title: '提醒',
    summary: '在指定时间提醒你一件事，到时会显示并朗读。',
    params: {
      time: '时间：2025-01-22T14:30（本地时间）、2025-01-22T14:30:00+08:00 或 14:30',
      text: '要提醒你的事，一行文字，例如“给妈妈打电话”（换行和控制字符会被去掉）',
    },
    sentence: (core) => {
      const f = facts(core, SET_REMINDER);
      return f && `在${zhDue(f[0]!)} 提醒你：${f[1]}`;
    },
  },
  list_reminders: {
    title: '提醒列表',
    summary: '列出尚未到时的提醒和计时器。',
    params: {},
    sentence: (core) => {
      const f = facts(core, LIST_REMINDERS);
      return f && `读取你的提醒和计时器（${f[0]} 个尚未到时）`;
    },
  },
  cancel_reminder: {
    title: '取消提醒',
    summary: '取消一个提醒或计时器。',
    params: { id: '提醒的编号，例如 r-1a2b3c4d' },
    sentence: (core) => {
      const f = facts(core, CANCEL_REMINDER);
      if (!f) return undefined;
      const [kind, text, due, yours] = f;
      const what = kind === 'timer' ? '计时器' : '提醒';
      return `取消定在${zhDue(due!)} 的${what}${text ?? ''}${yours ? '（这是你自己设的）' : ''}`;
    },
  },
  list_directory: {
    title: '列出文件夹',
    summary: '列出允许的文件夹中的文件和子文件夹。',
    params: {
      path: '文件夹路径，相对于允许的文件夹，例如 notes；默认为允许的文件夹本身',
      offset: '跳过这么多项（填上一页结果中的 next_offset）；默认 0',
      limit: '每页的项数，最多 200；默认 50',
    },
    sentence: (core, call) => {
      const d = delivered(core, call);
      const f = d && facts(d.body, LIST_DIRECTORY);
      return f && zhDelivery(` ${f[0]} 的文件列表（${f[1]} 项）`, d.to);
    },
  },
  read_file: {
    title: '读取文件',
    summary: '读取允许的文件夹中的文本文件，并把内容发给服务器。',
    params: { path: '文件路径，相对于允许的文件夹，例如 notes/todo.txt' },
    sentence: (core, call) => {
      const d = delivered(core, call);
      const f = d && facts(d.body, READ_FILE);
      return f && zhDelivery(` ${f[0]}（${f[1]}）的内容`, d.to);
    },
  },
  search_files: {
    title: '搜索文件',
    summary: '在允许的文件夹中按名称或内容查找文件。',
    params: {
      pattern: '文件名通配符，例如 *.txt 或 note-2025*；* 表示所有名称',
      text: '只找内容包含这段文字的文件（不区分大小写）',
      path: '要搜索的文件夹，相对于允许的文件夹，例如 notes；默认搜索全部',
      max_results: '最多返回这么多个结果；默认 50',
    },
    sentence: (core, call) => {
      const f = facts(core, SEARCH_FILES);
      if (!f) return undefined;
      const [folder, asked, verb, what, tail] = f as string[];
      const to = tail === 'here' ? undefined : receiver(tail!.slice('to '.length), call);
      if ((verb === 'send') !== (to !== undefined)) return undefined;
      const lines = what !== 'matching paths';
      const q = facts(asked!, lines ? SEARCH_NAMES_AND_TEXT : SEARCH_NAMES);
      if (!q) return undefined;
      const [names, text] = q;
      const like = names === 'all names' ? '' : `名称匹配 ${names!.slice('names like '.length)} `;
      const containing = text ? `${like ? '且' : ''}内容包含 ${text} ` : '';
      const found = like || containing ? `${like}${containing}的文件` : '所有文件';
      const sent = lines ? '匹配的路径和文本行' : '匹配的路径';
      return `在 ${folder} 中查找${found}，${zhDelivery(sent, to)}`;
    },
  },
  get_file_info: {
    title: '文件信息',
    summary: '查看文件的大小、类型和修改时间。',
    params: { path: '路径，相对于允许的文件夹，例如 notes/todo.txt' },
    sentence: (core, call) => {
      const d = delivered(core, call);
      const f = d && facts(d.body, FILE_INFO);
      if (!f) return undefined;
      const [folder, file] = f;
      const what = folder !== undefined ? `文件夹 ${folder}` : ` ${file}`;
      return zhDelivery(`${what} 的类型、大小和修改日期`, d.to);
    },
  },
  open_url: {
    title: '打开网址',
    summary: '在浏览器中打开一个 http 或 https 网址。',
    params: { url: '网址，例如 https://example.com/page' },
    sentence: (core) => {
      const f = facts(core, OPEN_URL);
      return f && `在浏览器中打开 ${f[0]}`;
    },
  },
  list_apps: {
    title: '应用列表',
    summary: '列出这台电脑上已安装的应用。',
    params: { query: '应用名称的一部分，例如 calc', limit: '最多列出这么多个（默认 50）' },
    sentence: (core) => {
      const f = facts(core, LIST_APPS);
      if (!f) return undefined;
      return f[0] ? `列出名称匹配${f[0]}的已安装应用` : '列出已安装的应用';
    },
  },
  open_app: {
    title: '打开应用',
    summary: '打开一个已安装的应用。',
    params: { id: '应用的编号，来自应用列表（list_apps）' },
    sentence: (core) => {
      const f = facts(core, OPEN_APP);
      if (!f) return undefined;
      const [name, id, command, launcher, role, file] = f;
      const warning = launcher
        ? `；注意：它的启动文件 ${launcher} 位于服务器可以写入的文件夹中`
        : '';
      const what = role === 'program' ? '它运行的程序' : '它的参数所指的文件';
      const ran = file ? `；注意：${what} ${file} 位于服务器可以写入的文件夹中` : '';
      return `打开应用${name}（${id}）：将运行 ${command}${warning}${ran}`;
    },
  },
  read_clipboard: {
    title: '读取剪贴板',
    summary: '读取剪贴板中的文本，并把它发给服务器。',
    params: {},
    sentence: (core, call) => {
      const to = receiver(facts(core, READ_CLIPBOARD)?.[0], call);
      return to && `把剪贴板上的文本发送给 ${to}`;
    },
  },
  write_clipboard: {
    title: '写入剪贴板',
    summary: '把文本放到剪贴板上。',
    params: { text: '要复制的文本' },
    sentence: (core) => {
      const f = facts(core, WRITE_CLIPBOARD);
      if (!f) return undefined;
      const [text, chars, lines, invisible] = f;
      const facts_ = [`${chars} 个字符`];
      if (lines) facts_.push(`${lines} 行`);
      const careful = invisible ? `；注意：含 ${invisible} 个不可见或改变文字方向的字符` : '';
      return `把剪贴板内容替换为${text}（${facts_.join('，')}${careful}）`;
    },
  },
  get_device_status: {
    title: '设备状态',
    summary: '查看系统、电量、音量、网络、时区和语言。',
    params: {},
    sentence: (core) =>
      core === DEVICE_STATUS
        ? '读取这台电脑的状态（系统、电量、音量、网络、时区、语言）'
        : undefined,
  },
  set_volume: {
    title: '设置音量',
    summary: '调节或静音这台电脑的音量。',
    params: { level: '音量百分比，0–100', mute: '勾选为静音，不勾选为取消静音' },
    sentence: (core) => {
      const f = facts(core, SET_VOLUME);
      if (!f) return undefined;
      const [mute, withLevel, level] = f;
      const muting = mute === 'Mute' ? '静音' : '取消静音';
      if (mute) return withLevel ? `${muting}，并把音量设为 ${withLevel}%` : muting;
      return `把音量设为 ${level}%`;
    },
  },
  take_screenshot: {
    title: '截屏',
    summary: '截取屏幕画面，并把它发给服务器。',
    params: { question: '想了解屏幕上的什么，例如“显示的是什么错误？”' },
    sentence: (core, call) => {
      if (core === SCREENSHOT_LOCAL) return '截取屏幕（画面只留在这台电脑上）';
      const vision = facts(core, SCREENSHOT_VISION);
      if (vision) {
        const [question, server, host] = vision;
        const to = receiver(server, call);
        return to && `截取屏幕，连同问题${question}发送给 ${to} 的识图服务（${host}）`;
      }
      const to = receiver(facts(core, SCREENSHOT_IMAGE)?.[0], call);
      return to && `截取屏幕，并把画面发送给 ${to}`;
    },
  },
};

const BY_LANGUAGE: Record<string, Record<string, ServiceWords>> = { 'zh-CN': ZH_CN };

function words(lang: string, name: string): ServiceWords | undefined {
  const table = BY_LANGUAGE[lang];
  return table && Object.hasOwn(table, name) ? table[name] : undefined;
}

/** Whether `lang` words this service (tests: every built-in must be, or it shows English). */
export function translatedService(
  lang: string,
  name: string,
): { params: readonly string[]; sentence: boolean } | undefined {
  const w = words(lang, name);
  return w && { params: Object.keys(w.params ?? {}), sentence: w.sentence !== undefined };
}

/** A service's title in `lang`, or the core's. */
export function serviceTitle(lang: string, service: { name: string; title?: string }): string {
  return words(lang, service.name)?.title ?? service.title ?? service.name;
}

/** A service's one-sentence summary for people in `lang`, or the core's. */
export function serviceSummary(lang: string, service: { name: string; summary: string }): string {
  return words(lang, service.name)?.summary ?? service.summary;
}

/** Help for one Try it field in `lang`, or the schema's own. */
export function paramHelp(
  lang: string,
  service: string,
  param: string,
  fallback: string | undefined,
): string | undefined {
  const params = words(lang, service)?.params;
  return params && Object.hasOwn(params, param) ? params[param] : fallback;
}

/**
 * A call in plain words in `lang` (the prompt's sentence, a tool card's line): the core's own
 * sentence translated, or as it is when there is no translation for this service or the sentence
 * is not of a shape the translation knows. `connection` is the prompt's (a tool card has only an
 * id): when its name is known, a sentence naming another receiver stays in the core's words.
 */
export function callSentence(
  lang: string,
  call: { service: string; connection?: unknown },
  coreSentence: string | undefined,
): string | undefined {
  const sentence = words(lang, call.service)?.sentence;
  if (!sentence || coreSentence === undefined) return coreSentence;
  const c = call.connection;
  const recipient =
    c && typeof c === 'object' && typeof (c as { name?: unknown }).name === 'string'
      ? (c as { name: string }).name
      : undefined;
  return sentence(coreSentence, { recipient }) ?? coreSentence;
}
