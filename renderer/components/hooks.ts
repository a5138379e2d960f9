import { type RefObject, useEffect, useRef, useState } from 'react';

/** The current time, refreshed every `ms` while `active` (for countdowns). */
export function useNow(active = true, ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [active, ms]);
  return now;
}

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex="-1"])';

export function focusables(root: HTMLElement): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(FOCUSABLE)].filter(
    (el) => !el.hasAttribute('inert') && el.offsetParent !== null,
  );
}

/**
 * Keep Tab and Shift+Tab inside `ref` while mounted, and give focus back to what had it before
 * when it closes.
 */
export function useFocusTrap(ref: RefObject<HTMLElement | null>, active = true): void {
  useEffect(() => {
    if (!active) return;
    const before = document.activeElement as HTMLElement | null;
    const onKey = (e: KeyboardEvent) => {
      const root = ref.current;
      // Under a modal on top (the permission prompt makes the rest inert): that one traps.
      if (e.key !== 'Tab' || !root || root.closest('[inert]')) return;
      const items = focusables(root);
      if (items.length === 0) {
        e.preventDefault();
        return;
      }
      const first = items[0] as HTMLElement;
      const last = items[items.length - 1] as HTMLElement;
      const current = document.activeElement;
      if (!root.contains(current)) {
        e.preventDefault();
        first.focus();
      } else if (e.shiftKey && current === first) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && current === last) {
        e.preventDefault();
        first.focus();
      }
    };
    document.addEventListener('keydown', onKey, true);
    return () => {
      document.removeEventListener('keydown', onKey, true);
      if (before && document.contains(before)) before.focus();
    };
  }, [ref, active]);
}

/**
 * A modal's keyboard: Tab stays inside `ref`, `first` gets the focus once when it opens (a
 * re-render must not pull it back), and Esc calls `onEscape` — unless a permission prompt on top
 * has made this one inert, in which case Esc is the prompt's.
 */
export function useDialog(
  ref: RefObject<HTMLElement | null>,
  first: RefObject<HTMLElement | null>,
  onEscape: () => void,
): void {
  useFocusTrap(ref);
  const escape = useRef(onEscape);
  escape.current = onEscape;
  useEffect(() => {
    first.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && !ref.current?.closest('[inert]')) {
        e.preventDefault();
        escape.current();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [ref, first]);
}
