/** The sentence under a token field: where a token typed here is kept, on this host. */
import { useTranslation } from 'react-i18next';
import type { SettingsView } from '../../app/contract/index.js';
import { secretsPlace } from '../lib/secrets.js';
import { useSettings } from '../store/settings.js';

type Secrets = SettingsView['secrets'] | undefined;

export function TokenStorageNote({ secrets }: { secrets?: Secrets }) {
  const { t } = useTranslation();
  const current = useSettings((s) => s.settings?.secrets);
  return <>{t(`secrets.tokenNew.${secretsPlace(secrets ?? current)}`)}</>;
}

/** Settings → where things are kept: the same place, as a noun phrase. */
export function SecretsPlaceText({ secrets }: { secrets?: Secrets }) {
  const { t } = useTranslation();
  const current = useSettings((s) => s.settings?.secrets);
  const shown = secrets ?? current;
  return <>{t(`secrets.place.${secretsPlace(shown)}`, { kind: shown?.kind ?? '' })}</>;
}
