/**
 * Words for people, words for the AI (issue 14, items 5 and 6): every refusal code has a short
 * human line in both languages; the services, calls and connections the core names in English
 * read in Chinese; the Services page's one model of a row's policy and grants.
 */
import os from 'node:os';
import path from 'node:path';
import i18next from 'i18next';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ConnectionView,
  ERROR_CODES,
  LOCAL_CONNECTION,
  type NoticeWords,
  SERVICE_GROUPS,
  type ServiceView,
} from '../../app/contract/index.js';
import { policyChoice, sectionsOf } from '../../renderer/features/services/sections.js';
import {
  callSentence,
  paramHelp,
  serviceSummary,
  serviceTitle,
} from '../../renderer/i18n/service-text.js';
import { errorCodeText, grantText, noticeText } from '../../renderer/lib/labels.js';
import { connectionLabel } from '../../renderer/lib/names.js';
import { useLanguage } from './i18n-helper.js';

const HAN = /\p{Script=Han}/u;

beforeAll(() => useLanguage('en'));

describe('refusal lines', () => {
  it('every gate error code has its own short line for people in English and Chinese, never the model’s sentence', async () => {
    for (const lang of ['en', 'zh-CN'] as const) {
      await useLanguage(lang);
      const t = i18next.t;
      const lines = ERROR_CODES.map((code) => errorCodeText(t, code));
      for (const [i, line] of lines.entries()) {
        const code = ERROR_CODES[i]!;
        expect(line, code).not.toBe(t('errorCode.unknown', { code }));
        expect(line.length, code).toBeLessThanOrEqual(40);
        expect(line, code).not.toMatch(/retry|tell the user|the model|unless the user/i);
        if (lang === 'zh-CN') expect(line, code).toMatch(HAN);
      }
      expect(new Set(lines).size).toBe(lines.length);
    }
    await useLanguage('en');
    expect(errorCodeText(i18next.t, 'denied')).toBe('Denied by you');
    expect(errorCodeText(i18next.t, 'disabled')).toMatch(/^Blocked in Services/);
    expect(errorCodeText(i18next.t, 'prompt_timeout')).toBe('Timed out waiting for you');
    // A code from a newer core still reads as a failure, with the code to look up.
    expect(errorCodeText(i18next.t, 'not_found_yet')).toBe('Failed (not_found_yet)');
  });
});

describe("the agent's own notices", () => {
  // Paths as the notices carry them: shown exactly as they are, whatever the machine.
  const DATA = path.join(os.tmpdir(), 'advent-words', 'data');
  const SETTINGS = path.join(DATA, 'settings.json');
  const KEPT = `${SETTINGS}.corrupt-2025-01-31T12-03-04-005Z`;
  // One of each: a key added to NoticeWords without a sample here does not compile.
  const samples: { [K in NoticeWords['key']]: Extract<NoticeWords, { key: K }> } = {
    'notice.callsPaced': {
      key: 'notice.callsPaced',
      params: { server: 'Kitchen', burst: 60, perSecond: 10 },
    },
    'notice.auditUnwritable': { key: 'notice.auditUnwritable', params: { reason: 'ENOSPC' } },
    'notice.tokenExpiring': {
      key: 'notice.tokenExpiring',
      params: { server: 'Kitchen', at: Date.UTC(2026, 10, 24, 9, 30) },
    },
    'notice.interrupted': {
      key: 'notice.interrupted',
      params: { count: 2, calls: 'create_file (#12), open_url (#14)' },
    },
    'notice.alwaysNotSaved': { key: 'notice.alwaysNotSaved', params: { reason: 'EACCES' } },
    'notice.settingsTooLarge': {
      key: 'notice.settingsTooLarge',
      params: { file: SETTINGS, bytes: 70_000_000, keptAs: KEPT },
    },
    'notice.settingsNotJson': {
      key: 'notice.settingsNotJson',
      params: { file: SETTINGS, reason: 'Unexpected end of JSON input', keptAs: KEPT },
    },
    'notice.settingsInvalid': {
      key: 'notice.settingsInvalid',
      params: { file: SETTINGS, reason: 'promptTimeoutSec must be at least 5', keptAs: KEPT },
    },
    'notice.dataDirMadePrivate': {
      key: 'notice.dataDirMadePrivate',
      params: { dir: DATA, mode: '0755' },
    },
    'notice.dataDirOpen': {
      key: 'notice.dataDirOpen',
      params: { dir: DATA, mode: '0775', reason: 'EPERM' },
    },
    'notice.remindersSetAside': {
      key: 'notice.remindersSetAside',
      params: { keptAs: path.join(DATA, 'reminders.json.corrupt-2025-01-31T12-03-04-005Z') },
    },
    'notice.remindersNotSaved': { key: 'notice.remindersNotSaved', params: { reason: 'ENOSPC' } },
    'notice.auditHeadDamaged': { key: 'notice.auditHeadDamaged', params: { seq: 1204 } },
    'notice.auditKeyUnavailable': { key: 'notice.auditKeyUnavailable', params: {} },
    'notice.auditKeyUnsaved': { key: 'notice.auditKeyUnsaved', params: {} },
    'notice.auditKeyMissing': { key: 'notice.auditKeyMissing', params: { last: 57 } },
    'notice.auditUnchecked': { key: 'notice.auditUnchecked', params: { from: 58, to: 63 } },
    'notice.mcpSessionFailed': {
      key: 'notice.mcpSessionFailed',
      params: { reason: 'Already connected to a transport' },
    },
    'notice.mcpClientCutOff': { key: 'notice.mcpClientCutOff', params: { bytes: 8_388_608 } },
    'notice.mcpUnreachable': {
      key: 'notice.mcpUnreachable',
      params: { reason: 'EACCES: permission denied' },
    },
    'notice.linesHidden': {
      key: 'notice.linesHidden',
      params: { server: 'Kitchen', perSecond: 5 },
    },
    'notice.repliesHidden': {
      key: 'notice.repliesHidden',
      params: { server: 'Kitchen', perSecond: 5 },
    },
    'notice.shortcutUnconfirmed': {
      key: 'notice.shortcutUnconfirmed',
      params: { shortcut: 'CommandOrControl+Shift+Space' },
    },
  };

  it('each reads whole in English and in Chinese, with what it names kept as it is', async () => {
    for (const lang of ['en', 'zh-CN'] as const) {
      await useLanguage(lang);
      for (const words of Object.values(samples)) {
        const line = noticeText(i18next.t, words, lang);
        expect(line, words.key).not.toBe(words.key);
        expect(line, words.key).not.toMatch(/\{\{|undefined/);
        for (const value of Object.values(words.params))
          if (typeof value === 'string') expect(line, words.key).toContain(value);
        if (lang === 'zh-CN') expect(line, words.key).toMatch(HAN);
        else expect(line, words.key).not.toMatch(HAN);
      }
    }
    await useLanguage('en');
    // Words this build does not know (a newer core): the core's own sentence, never the key.
    const unknown = { key: 'notice.fromTheFuture', params: {} } as unknown as NoticeWords;
    expect(noticeText(i18next.t, unknown, 'en', 'The agent said this.')).toBe(
      'The agent said this.',
    );
    expect(noticeText(i18next.t, samples['notice.callsPaced'], 'en')).toMatch(
      /^Kitchen is calling services faster than 10 a second \(after 60 at once\)/,
    );
    // One call or several, in English.
    const one = { key: 'notice.interrupted', params: { count: 1, calls: 'x (#1)' } } as const;
    expect(noticeText(i18next.t, one, 'en')).toMatch(/^A call was interrupted/);
    expect(noticeText(i18next.t, samples['notice.interrupted'], 'en')).toMatch(/^2 calls were/);
    // The time in the reader's own format, never the epoch number.
    expect(noticeText(i18next.t, samples['notice.tokenExpiring'], 'en')).not.toMatch(/\d{10}/);
    // A size as a person reads it, in either language.
    expect(noticeText(i18next.t, samples['notice.mcpClientCutOff'], 'en')).toContain('8.0 MB');
    expect(noticeText(i18next.t, samples['notice.settingsTooLarge'], 'en')).toContain('66.8 MB');
    expect(noticeText(i18next.t, samples['notice.dataDirMadePrivate'], 'en')).toMatch(
      /^The data folder .* was open to other users \(mode 0755\)/,
    );
    expect(noticeText(i18next.t, samples['notice.dataDirMadePrivate'], 'en')).toContain(
      `The data folder ${DATA} was open`,
    );
    await useLanguage('zh-CN');
    expect(noticeText(i18next.t, samples['notice.mcpClientCutOff'], 'zh-CN')).toContain('8.0 MB');
    expect(noticeText(i18next.t, samples['notice.dataDirOpen'], 'zh-CN')).toContain(
      `chmod 700 "${DATA}"`,
    );
    await useLanguage('en');
  });
});

describe('services in Chinese', () => {
  const createFile = {
    name: 'create_file',
    title: 'Create file',
    summary: 'Writes a new text file in your allowed folders; replacing a file asks separately.',
  };

  it('titles and summaries of known services are translated; English and unknown services keep the core’s words', () => {
    expect(serviceTitle('zh-CN', createFile)).toBe('创建文件');
    expect(serviceSummary('zh-CN', createFile)).toMatch(HAN);
    expect(serviceTitle('en', createFile)).toBe('Create file');
    expect(serviceSummary('en', createFile)).toBe(createFile.summary);
    const imported = { name: 'memory_create_entities', title: 'Create entities', summary: 'x' };
    expect(serviceTitle('zh-CN', imported)).toBe('Create entities');
    expect(serviceTitle('zh-CN', { name: 'toString' })).toBe('toString');
    expect(paramHelp('zh-CN', 'create_file', 'filename', 'Path…')).toMatch(HAN);
    expect(paramHelp('zh-CN', 'create_file', 'nope', 'as given')).toBe('as given');
    expect(paramHelp('en', 'create_file', 'filename', 'Path…')).toBe('Path…');
  });

  it('a call reads in plain Chinese words, replacing says so, and other sentences stay the core’s', () => {
    const core = 'Create file notes/a.txt (9 B) in ~/Documents/Advent Agent';
    expect(callSentence('zh-CN', { service: 'create_file' }, core)).toBe(
      '在 ~/Documents/Advent Agent 中新建文件 notes/a.txt（9 B）',
    );
    expect(
      callSentence('zh-CN', { service: 'create_file' }, core.replace(/^Create/, 'Replace')),
    ).toMatch(/^替换 ~\/Documents\/Advent Agent 中的文件 notes\/a\.txt（9 B），原有内容会丢失$/);
    const held = 'Create file (filename “1”)';
    expect(callSentence('zh-CN', { service: 'create_file' }, held)).toBe(held);
    expect(callSentence('en', { service: 'create_file' }, core)).toBe(core);
    expect(
      callSentence(
        'zh-CN',
        { service: 'get_current_time' },
        'Read the current time (Europe/Paris)',
      ),
    ).toBe('读取当前时间（Europe/Paris）');
  });
});

describe('connection names', () => {
  const demo = {
    profile: { id: 'demo', kind: 'advent', name: 'Demo server (simulated)', demo: true },
  } as unknown as ConnectionView;
  const mine = { profile: { id: 'p-1', kind: 'advent', name: 'Kitchen' } } as ConnectionView;

  it('the demo and the user’s own runs are named in the user’s language; other names are the user’s, by current id', async () => {
    await useLanguage('zh-CN');
    const t = i18next.t;
    expect(connectionLabel(t, { id: 'demo', name: 'Demo server (simulated)' }, [demo])).toBe(
      '演示服务器（模拟）',
    );
    // The demo gone (an old record): still the translated name, by its id.
    expect(connectionLabel(t, { id: 'demo', name: 'Demo server (simulated)' })).toBe(
      '演示服务器（模拟）',
    );
    expect(connectionLabel(t, LOCAL_CONNECTION)).toMatch(HAN);
    expect(connectionLabel(t, { name: 'local' })).toMatch(HAN);
    // Renamed since the call: the current name.
    expect(connectionLabel(t, { id: 'p-1', name: 'Old name' }, [demo, mine])).toBe('Kitchen');
    expect(connectionLabel(t, { id: 'p-9', name: 'Gone' }, [mine])).toBe('Gone');
    await useLanguage('en');
  });
});

describe('the Services page model', () => {
  const view = (over: Partial<ServiceView>): ServiceView => ({
    name: 'create_file',
    title: 'Create file',
    description: 'for the model',
    summary: 'for people',
    group: 'files',
    risk: 'write',
    userOnly: false,
    enabled: true,
    policy: 'ask',
    alwaysGrants: [],
    parameters: {},
    ...over,
  });

  it('a remembered "always" for the whole service is what the policy menu shows; deny still wins', () => {
    expect(policyChoice(view({}))).toBe('ask');
    expect(policyChoice(view({ alwaysGrants: ['create_file'] }))).toBe('granted');
    expect(policyChoice(view({ alwaysGrants: ['create_file:overwrite'] }))).toBe('ask');
    expect(policyChoice(view({ policy: 'deny', alwaysGrants: ['create_file'] }))).toBe('deny');
    expect(policyChoice(view({ policy: 'allow', alwaysGrants: ['create_file'] }))).toBe('allow');
    const t = i18next.t;
    expect(grantText(t, 'create_file', 'create_file')).toBe('every call');
    expect(grantText(t, 'create_file', 'create_file:overwrite')).toBe('replacing existing files');
    expect(grantText(t, 'create_file', 'create_file:delete')).toBe('delete');
  });

  it('forty services sort into their groups in a fixed order, imported tools under their server', () => {
    const services: ServiceView[] = [];
    for (let i = 0; i < 36; i++)
      services.push(view({ name: `svc_${i}`, group: SERVICE_GROUPS[i % SERVICE_GROUPS.length]! }));
    for (const [server, tool] of [
      ['memory', 'read_graph'],
      ['filesystem', 'list_allowed'],
      ['memory', 'create_entities'],
      ['filesystem', 'read_text'],
    ])
      services.push({
        ...view({ name: `${server}_${tool}` }),
        server: { id: `m-${server}`, name: server!, tool: tool! },
      });
    const sections = sectionsOf(services);
    expect(sections.map((s) => s.group ?? `server:${s.server}`)).toEqual([
      ...SERVICE_GROUPS,
      'server:filesystem',
      'server:memory',
    ]);
    expect(sections.reduce((n, s) => n + s.services.length, 0)).toBe(40);
    expect(sections.at(-1)?.services.map((s) => s.name)).toEqual([
      'memory_read_graph',
      'memory_create_entities',
    ]);
    // A group this UI does not know yet lands in "other" rather than vanishing.
    const odd = sectionsOf([view({ name: 'x', group: 'weather' as never })]);
    expect(odd.map((s) => s.group)).toEqual(['other']);
  });
});
