/** The theme: 'system' follows prefers-color-scheme (CSS); light/dark force it via data-theme. */
export type Theme = 'system' | 'light' | 'dark';

export function applyTheme(theme: Theme): void {
  const root = document.documentElement;
  if (theme === 'system') delete root.dataset.theme;
  else root.dataset.theme = theme;
}
