/**
 * A button that opens a small menu (WAI-ARIA menu button): Enter, Space or ArrowDown open it on
 * the first item, ArrowUp on the last; arrows, Home and End move; Enter or Space choose; Esc
 * closes it and gives focus back to the button without reaching anything underneath (a dialog's
 * own Esc); Tab or a click elsewhere closes it.
 */
import { type KeyboardEvent, type ReactNode, useEffect, useId, useRef, useState } from 'react';

export interface MenuItem {
  label: string;
  /** A second line under the label, read as the item's description. */
  hint?: string;
  testId: string;
  onSelect: () => void;
}

export function MenuButton({
  label,
  items,
  disabled,
  testId,
  className = 'button',
  icon,
}: {
  label: string;
  items: MenuItem[];
  disabled?: boolean;
  testId: string;
  className?: string;
  icon?: ReactNode;
}) {
  const id = useId();
  const [open, setOpen] = useState(false);
  const [focusAt, setFocusAt] = useState(0);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const menuRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    menuRef.current?.querySelectorAll<HTMLElement>('[role="menuitem"]')[focusAt]?.focus();
  }, [open, focusAt]);

  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      const target = e.target as Node;
      if (!menuRef.current?.contains(target) && !buttonRef.current?.contains(target))
        setOpen(false);
    };
    document.addEventListener('mousedown', onDown);
    return () => document.removeEventListener('mousedown', onDown);
  }, [open]);

  useEffect(() => {
    if (disabled) setOpen(false);
  }, [disabled]);

  function show(at: number) {
    setFocusAt(at);
    setOpen(true);
  }

  function close(refocus: boolean) {
    setOpen(false);
    if (refocus) buttonRef.current?.focus();
  }

  function onButtonKey(e: KeyboardEvent<HTMLButtonElement>) {
    if (e.key === 'ArrowDown' || e.key === 'Enter' || e.key === ' ') show(0);
    else if (e.key === 'ArrowUp') show(items.length - 1);
    else return;
    e.preventDefault();
  }

  function onMenuKey(e: KeyboardEvent<HTMLDivElement>) {
    const last = items.length - 1;
    switch (e.key) {
      case 'ArrowDown':
        setFocusAt((i) => (i >= last ? 0 : i + 1));
        break;
      case 'ArrowUp':
        setFocusAt((i) => (i <= 0 ? last : i - 1));
        break;
      case 'Home':
        setFocusAt(0);
        break;
      case 'End':
        setFocusAt(last);
        break;
      case 'Escape':
        // The menu's own: a dialog around it must not take this Esc as its answer.
        e.stopPropagation();
        close(true);
        break;
      case 'Tab':
        setOpen(false);
        return; // let Tab move on
      default:
        return;
    }
    e.preventDefault();
  }

  return (
    <span className="menu-button">
      <button
        ref={buttonRef}
        type="button"
        className={className}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? `${id}-menu` : undefined}
        disabled={disabled}
        onClick={() => (open ? close(false) : show(0))}
        onKeyDown={onButtonKey}
        data-testid={testId}
      >
        {label}
        {icon}
      </button>
      {open && (
        <div
          ref={menuRef}
          id={`${id}-menu`}
          role="menu"
          aria-label={label}
          className="menu"
          onKeyDown={onMenuKey}
        >
          {items.map((item, i) => (
            <button
              key={item.testId}
              type="button"
              role="menuitem"
              tabIndex={i === focusAt ? 0 : -1}
              className="menu-item"
              aria-describedby={item.hint ? `${id}-hint-${i}` : undefined}
              onClick={() => {
                close(true);
                item.onSelect();
              }}
              data-testid={item.testId}
            >
              <span className="menu-item-label">{item.label}</span>
              {item.hint && (
                <span className="menu-item-hint" id={`${id}-hint-${i}`}>
                  {item.hint}
                </span>
              )}
            </button>
          ))}
        </div>
      )}
    </span>
  );
}
