/** i18next with the app's own resources, under Node, for tests of what the UI says. */
import i18next from 'i18next';
import { en } from '../../renderer/i18n/en.js';
import { zhCN } from '../../renderer/i18n/zh-CN.js';

let started = false;

export async function useLanguage(lng: 'en' | 'zh-CN'): Promise<void> {
  if (!started) {
    started = true;
    await i18next.init({
      resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
      lng,
      fallbackLng: 'en',
      interpolation: { escapeValue: false },
      initAsync: false,
    });
  }
  await i18next.changeLanguage(lng);
}
