/**
 * The core names and describes its services in English: ServiceView.title and .summary, the
 * parameters' help in their schema, and each call's plain-words sentence (the prompt's summary).
 * English is that text itself, so nothing here copies it (a copy would drift from the core);
 * what is here are the translations, by service name, for the services the UI knows. A service it
 * does not know (a new built-in, an imported MCP tool) shows the core's own words.
 */
import { formatBytes } from '../lib/format.js';

interface ServiceWords {
  title: string;
  summary: string;
  /** Help for the Try it fields, by parameter name. */
  params?: Record<string, string>;
  /** The call in plain words, from its params (which the gate has validated for a prompt). */
  sentence?: (params: Record<string, unknown>, how: { escalation?: string }) => string | undefined;
}

const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v.length > 0 ? v : undefined;

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).byteLength;

const ZH_CN: Record<string, ServiceWords> = {
  create_file: {
    title: '创建文件',
    summary: '在你允许的文件夹中新建文本文件；替换已有文件会另外询问。',
    params: {
      filename: '文件路径，相对于允许的文件夹，例如 notes/todo.txt',
      content: '要写入文件的文本（UTF-8）',
      overwrite: '勾选后可替换已存在的文件（会先询问你）',
    },
    sentence: (p, { escalation }) => {
      const file = str(p.filename);
      if (!file || typeof p.content !== 'string') return undefined;
      const size = formatBytes(utf8Bytes(p.content));
      return escalation === 'overwrite'
        ? `替换文件 ${file}（${size}），原有内容会丢失`
        : `写入文件 ${file}（${size}）`;
    },
  },
  get_current_time: {
    title: '当前时间',
    summary: '告诉你当前的日期和时间，可按任意时区。',
    params: {
      format: 'simple：“年-月-日 时:分:秒”；detailed：ISO 时间、日期、星期、时区和 UTC 偏移',
      timezone: 'IANA 时区，例如 Asia/Shanghai；默认为你所在的时区',
    },
    sentence: (p) => `读取当前时间（${str(p.timezone) ?? '本地时区'}）`,
  },
  // Services other engineers are adding (issue 13): their titles and summaries, by name.
  set_timer: { title: '计时器', summary: '在一段时间后提醒你，到时会显示并朗读。' },
  set_reminder: { title: '提醒', summary: '在指定时间提醒你一件事，到时会显示并朗读。' },
  list_reminders: { title: '提醒列表', summary: '列出尚未到时的提醒和计时器。' },
  cancel_reminder: { title: '取消提醒', summary: '取消一个提醒或计时器。' },
  list_directory: { title: '列出文件夹', summary: '列出允许的文件夹中的文件和子文件夹。' },
  read_file: { title: '读取文件', summary: '读取允许的文件夹中的文本文件，并把内容发给服务器。' },
  search_files: { title: '搜索文件', summary: '在允许的文件夹中按名称或内容查找文件。' },
  get_file_info: { title: '文件信息', summary: '查看文件的大小、类型和修改时间。' },
  open_url: { title: '打开网址', summary: '在浏览器中打开一个 http 或 https 网址。' },
  list_apps: { title: '应用列表', summary: '列出这台电脑上已安装的应用。' },
  open_app: { title: '打开应用', summary: '打开一个已安装的应用。' },
  read_clipboard: { title: '读取剪贴板', summary: '读取剪贴板中的文本，并把它发给服务器。' },
  write_clipboard: { title: '写入剪贴板', summary: '把文本放到剪贴板上。' },
  get_device_status: {
    title: '设备状态',
    summary: '查看系统、电量、音量、网络、时区和语言。',
  },
  set_volume: { title: '设置音量', summary: '调节或静音这台电脑的音量。' },
  take_screenshot: { title: '截屏', summary: '截取屏幕画面，并把它发给服务器。' },
};

const BY_LANGUAGE: Record<string, Record<string, ServiceWords>> = { 'zh-CN': ZH_CN };

function words(lang: string, name: string): ServiceWords | undefined {
  const table = BY_LANGUAGE[lang];
  return table && Object.hasOwn(table, name) ? table[name] : undefined;
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
 * A call in plain words in `lang` (the prompt's sentence, a tool card's line), or the core's own
 * sentence when there is no translation for this service or its params do not fit one.
 */
export function callSentence(
  lang: string,
  call: { service: string; params: unknown; grantKey?: string },
  coreSentence: string | undefined,
): string | undefined {
  const sentence = words(lang, call.service)?.sentence;
  if (!sentence || !call.params || typeof call.params !== 'object') return coreSentence;
  const escalation =
    call.grantKey && call.grantKey.startsWith(`${call.service}:`)
      ? call.grantKey.slice(call.service.length + 1)
      : undefined;
  return sentence(call.params as Record<string, unknown>, { escalation }) ?? coreSentence;
}
