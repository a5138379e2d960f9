/**
 * A notice the agent itself gives (not a protocol line, not a server's words) in words for people.
 * The notice's `message` stays the English sentence a terminal prints and a log keeps; a window
 * shows these words instead, translated. Values a person would not translate (a server's name, a
 * system error) are params, shown as they are.
 */
export type NoticeWords =
  | { key: 'notice.callsPaced'; params: { server: string; burst: number; perSecond: number } }
  | { key: 'notice.auditUnwritable'; params: { reason: string } }
  /** `at`: epoch ms, shown in the reader's own date format. */
  | { key: 'notice.tokenExpiring'; params: { server: string; at: number } }
  /** `calls`: the first few interrupted calls, `service (#seq)`, comma separated. */
  | { key: 'notice.interrupted'; params: { count: number; calls: string } }
  | { key: 'notice.alwaysNotSaved'; params: { reason: string } }
  /** The settings file set aside, defaults in use: `file` as it was, `keptAs` the copy. */
  | { key: 'notice.settingsTooLarge'; params: { file: string; bytes: number; keptAs: string } }
  | { key: 'notice.settingsNotJson'; params: { file: string; reason: string; keptAs: string } }
  | { key: 'notice.settingsInvalid'; params: { file: string; reason: string; keptAs: string } }
  /** `mode`: the folder's mode as it was, four octal digits (`0755`). */
  | { key: 'notice.dataDirMadePrivate'; params: { dir: string; mode: string } }
  | { key: 'notice.dataDirOpen'; params: { dir: string; mode: string; reason: string } }
  | { key: 'notice.remindersSetAside'; params: { keptAs: string } }
  | { key: 'notice.remindersNotSaved'; params: { reason: string } }
  | { key: 'notice.mcpSessionFailed'; params: { reason: string } }
  /** `bytes`: the answers a client on stdio left unread when it was cut off. */
  | { key: 'notice.mcpClientCutOff'; params: { bytes: number } }
  | { key: 'notice.mcpUnreachable'; params: { reason: string } }
  /** `shortcut`: the accelerator as Electron spells it (`CommandOrControl+Shift+Space`). */
  | { key: 'notice.shortcutUnconfirmed'; params: { shortcut: string } }
  /** A server's status and protocol lines past their pace are not shown until it slows down. */
  | { key: 'notice.linesHidden'; params: { server: string; perSecond: number } }
  /** A server's replies past their pace (server-tasks.ts) are not shown until it slows down. */
  | { key: 'notice.repliesHidden'; params: { server: string; perSecond: number } }
  /** The audit log's tamper evidence cannot vouch for some records (app/audit/chain-secret.ts). */
  | { key: 'notice.auditHeadDamaged'; params: { seq: number } }
  | { key: 'notice.auditKeyUnavailable'; params: Record<string, never> }
  | { key: 'notice.auditKeyUnsaved'; params: Record<string, never> }
  | { key: 'notice.auditKeyMissing'; params: { last: number } }
  | { key: 'notice.auditUnchecked'; params: { from: number; to: number } };

/** A notice as the agent keeps it to tell again (one found while opening, before anyone listened). */
export interface AgentNotice {
  message: string;
  words?: NoticeWords;
}
