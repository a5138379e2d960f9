/** Save text as a file through the browser's download (works in Electron and the browser host). */
export function downloadText(text: string, filename: string, type: string): void {
  const blob = new Blob([text], { type });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  // Give the download a moment to start before the URL goes away.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Excel reads a CSV as UTF-8 (Chinese file names intact) only with a byte order mark. */
export function withBom(csv: string): string {
  return csv.startsWith('\uFEFF') ? csv : `\uFEFF${csv}`;
}

export function exportName(ext: 'json' | 'csv', at = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${at.getFullYear()}${p(at.getMonth() + 1)}${p(at.getDate())}-${p(at.getHours())}${p(at.getMinutes())}`;
  return `advent-agent-audit-${stamp}.${ext}`;
}
