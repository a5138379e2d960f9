/**
 * i18next with English and Simplified Chinese. The language comes from settings (and, before
 * the first snapshot, from the browser); switching applies at once and updates <html lang>.
 */
import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import { en } from './en.js';
import { zhCN } from './zh-CN.js';

import type { Language } from '../../app/contract/index.js';

export type { Language };

declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: 'translation';
    resources: { translation: typeof en };
  }
}

export function guessLanguage(): Language {
  const langs = typeof navigator !== 'undefined' ? navigator.languages : [];
  return langs.some((l) => l.toLowerCase().startsWith('zh')) ? 'zh-CN' : 'en';
}

export function startI18n(): typeof i18next {
  void i18next.use(initReactI18next).init({
    resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
    lng: guessLanguage(),
    fallbackLng: 'en',
    interpolation: { escapeValue: false }, // React escapes
    returnNull: false,
    initAsync: false,
  });
  document.documentElement.lang = i18next.language;
  return i18next;
}

export function applyLanguage(lang: Language): void {
  if (i18next.language !== lang) void i18next.changeLanguage(lang);
  document.documentElement.lang = lang;
}

export default i18next;
