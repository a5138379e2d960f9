import { useCallback, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { toast } from '../store/toasts.js';
import { errorText } from './labels.js';

/**
 * Run a command from a click: `busy` while it runs, its error as an error toast (the core's own
 * sentence), resolving to undefined on failure.
 */
export function useAction(): {
  busy: boolean;
  run: <T>(fn: () => Promise<T>) => Promise<T | undefined>;
} {
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const inflight = useRef(0);
  const run = useCallback(
    async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
      inflight.current += 1;
      setBusy(true);
      try {
        return await fn();
      } catch (err) {
        toast('error', errorText(t, err));
        return undefined;
      } finally {
        inflight.current -= 1;
        if (inflight.current === 0) setBusy(false);
      }
    },
    [t],
  );
  return { busy, run };
}
