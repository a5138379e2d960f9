/**
 * Components rendered to HTML under Node (no DOM here): i18next with the app's own resources, and
 * react-dom/server. For what a component says, not how it behaves (that is the e2e suite's job).
 */
import i18next from 'i18next';
import { createElement, type FunctionComponent } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { initReactI18next } from 'react-i18next';
import { en } from '../../renderer/i18n/en.js';
import { zhCN } from '../../renderer/i18n/zh-CN.js';

let started = false;

export async function useLanguage(lng: 'en' | 'zh-CN'): Promise<void> {
  if (!started) {
    started = true;
    await i18next.use(initReactI18next).init({
      resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
      lng,
      fallbackLng: 'en',
      interpolation: { escapeValue: false },
      initAsync: false,
    });
  }
  await i18next.changeLanguage(lng);
}

/** The visible text of a component's HTML (tags dropped, entities for quotes undone). */
export function renderText<P extends object>(component: FunctionComponent<P>, props: P): string {
  return renderToStaticMarkup(createElement(component, props))
    .replace(/<[^>]*>/g, ' ')
    .replace(/&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The HTML itself. */
export function renderHtml<P extends object>(component: FunctionComponent<P>, props: P): string {
  return renderToStaticMarkup(createElement(component, props));
}
