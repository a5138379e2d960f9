import type { ReactNode } from 'react';

/** A page's title (focused after navigation), an optional intro and actions on the right. */
export function PageHeader({
  title,
  intro,
  actions,
  aside,
}: {
  title: string;
  intro?: string;
  actions?: ReactNode;
  aside?: ReactNode;
}) {
  return (
    <header className="page-header">
      {aside}
      <div className="page-title">
        <h1 tabIndex={-1}>{title}</h1>
        {intro && <p className="muted">{intro}</p>}
      </div>
      {actions && <div className="page-actions">{actions}</div>}
    </header>
  );
}
