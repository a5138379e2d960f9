/**
 * The demo server's phrases for the desktop services, so a newcomer can try them without an AI:
 * "remind me in 10 seconds to stretch", "set a timer for 5 minutes", "list my reminders",
 * "open example.com". Each becomes one call to the agent; its answer becomes the reply.
 */
import { ACTIONS, type DemoLanguage } from '../kit/demo-words.js';
import { ask } from './demo-ask.js';
import type { SimPeer } from './peer.js';

export interface DemoAnswer {
  text: string;
  emoji: string;
}

const UNITS: Record<string, number> = {
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  秒: 1,
  秒钟: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  分: 60,
  分钟: 60,
  h: 3600,
  hour: 3600,
  hours: 3600,
  小时: 3600,
};
const UNIT = '(seconds?|secs?|s|minutes?|mins?|m|hours?|h|秒钟?|分钟?|小时)';

const REMIND_IN = new RegExp(
  `remind me in (\\d{1,6})\\s*${UNIT}\\b\\s*(?:to|about|of)?\\s*(.*)$`,
  'i',
);
const REMIND_IN_ZH = new RegExp(`(\\d{1,6})\\s*${UNIT}后?提醒我\\s*(.*)$`);
const TIMER = new RegExp(
  `(?:set )?(?:a )?timer (?:for )?(\\d{1,6})\\s*${UNIT}\\b(?:\\s*(?:for|:)\\s*(.*))?$`,
  'i',
);
const LIST = /(?:list|show|what are) my (?:reminders|timers)|我的提醒/i;
const OPEN = /^(?:please )?open\s+(\S+)\s*$|^打开\s*(\S+)$/i;

/** The answer for a desktop phrase, or undefined when `text` is not one. */
export async function desktopTurn(
  text: string,
  peer: SimPeer,
  lang: DemoLanguage = 'en',
): Promise<DemoAnswer | undefined> {
  const remind = REMIND_IN.exec(text) ?? REMIND_IN_ZH.exec(text);
  if (remind) return startTimer(peer, remind, 'remind', lang);
  const timer = TIMER.exec(text);
  if (timer) return startTimer(peer, timer, 'timer', lang);
  if (LIST.test(text)) return listReminders(peer, lang);
  const open = OPEN.exec(text);
  if (open) return openUrl(peer, (open[1] ?? open[2])!, lang);
  return undefined;
}

async function startTimer(
  peer: SimPeer,
  m: RegExpExecArray,
  how: 'remind' | 'timer',
  lang: DemoLanguage,
): Promise<DemoAnswer> {
  const seconds = Number(m[1]) * (UNITS[m[2]!.toLowerCase()] ?? 1);
  const label = (m[3] ?? '').trim().replace(/[.!?。！？]+$/, '');
  const params: Record<string, unknown> = { duration_seconds: seconds };
  if (label) params.label = label;
  const result = await ask(peer, 'set_timer', params, ACTIONS.timer, lang);
  if (typeof result === 'string') return sad(result);
  const when = `${m[1]} ${m[2]}`;
  return {
    text:
      how === 'remind' && label
        ? `OK, I'll remind you in ${when} to ${label}.`
        : `OK, a timer for ${when}${label ? ` (${label})` : ''} is running.`,
    emoji: 'happy',
  };
}

async function listReminders(peer: SimPeer, lang: DemoLanguage): Promise<DemoAnswer> {
  const result = await ask(peer, 'list_reminders', {}, ACTIONS.reminders, lang);
  if (typeof result === 'string') return sad(result);
  const data = result.data as { reminders?: { text: string; in?: string }[] } | undefined;
  const list = data?.reminders ?? [];
  if (list.length === 0) return { text: 'Nothing is waiting.', emoji: 'happy' };
  return {
    text: `Waiting: ${list.map((r) => `${r.text || 'a timer'}${r.in ? ` in ${r.in}` : ''}`).join('; ')}.`,
    emoji: 'happy',
  };
}

async function openUrl(peer: SimPeer, target: string, lang: DemoLanguage): Promise<DemoAnswer> {
  const url = /^https?:\/\//i.test(target) ? target : `https://${target}`;
  const result = await ask(peer, 'open_url', { url }, ACTIONS.open, lang);
  if (typeof result === 'string') return sad(result);
  return { text: `I opened ${url} in your browser.`, emoji: 'happy' };
}

function sad(text: string): DemoAnswer {
  return { text, emoji: 'sad' };
}
