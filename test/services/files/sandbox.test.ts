import { mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createFilesSandbox,
  displayPath,
  type FilesSandbox,
} from '../../../app/services/files/sandbox.js';
import { seededIds } from '../../../app/ids.js';
import { hasUnsafeChars } from '../../../app/unsafe-chars.js';
import { ServiceFailure } from '../../../app/services/service.js';
import { tempDirs } from '../helpers.js';

const dirs = tempDirs();
let root: string;
let outside: string;
let sandbox: FilesSandbox;
let maxBytes: number;

beforeEach(async () => {
  root = path.join(await dirs.make(), 'Advent Agent');
  await mkdir(root);
  outside = await dirs.make('advent-outside-');
  maxBytes = 1024;
  sandbox = createFilesSandbox({ roots: () => [root], maxFileBytes: () => maxBytes });
});

afterEach(() => dirs.cleanup());

async function refusal(promise: Promise<unknown>): Promise<ServiceFailure> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ServiceFailure) return err;
    throw err;
  }
  throw new Error('expected a ServiceFailure, got success');
}

describe('resolve refuses hostile names', () => {
  it.each<[string, unknown, string]>([
    ['parent escape', '../x', 'path_outside_roots'],
    ['escape after a folder', 'a/../../x', 'path_outside_roots'],
    ['absolute path outside', '/etc/passwd', 'path_outside_roots'],
    ['backslash escape', '..\\..\\x', 'path_outside_roots'],
    ['drive path', 'C:\\x', 'path_invalid'],
    ['drive-relative path', 'C:x', 'path_invalid'],
    ['drive path with slash', 'C:/x', 'path_invalid'],
    ['UNC share', '\\\\server\\share', 'path_invalid'],
    ['device path', '\\\\?\\C:\\x', 'path_invalid'],
    ['file URL', 'file:///etc/passwd', 'path_invalid'],
    ['other URL', 'https://example.com/x', 'path_invalid'],
    ['NUL byte', 'x\u0000y', 'path_invalid'],
    ['control character', 'a\u0007b', 'path_invalid'],
    ['DEL', 'a\u007fb', 'path_invalid'],
    ['C1 control', 'a\u0085b', 'path_invalid'],
    ['right-to-left override', 'a\u202Eb', 'path_invalid'],
    ['direction isolate', 'a\u2067b', 'path_invalid'],
    ['zero-width space', 'no\u200Btes.txt', 'path_invalid'],
    ['zero-width non-joiner in a Latin word', 'no\u200Ctes.txt', 'path_invalid'],
    ['zero-width joiner in a Latin word', 'no\u200Dtes.txt', 'path_invalid'],
    ['word joiner', 'notes\u2060.txt', 'path_invalid'],
    ['byte-order mark', '\uFEFFnotes.txt', 'path_invalid'],
    ['line separator', 'a\u2028b.txt', 'path_invalid'],
    ['paragraph separator', 'a\u2029b.txt', 'path_invalid'],
    ['tag characters hiding words', 'notes.txt\u{E0049}\u{E0047}\u{E004E}', 'path_invalid'],
    ['tag characters that spell no flag', '\u{1F3F4}\u{E0041}\u{E007F}.txt', 'path_invalid'],
    ['a joiner between emoji that make no emoji', '\u{1F600}\u200D\u{1F600}.txt', 'path_invalid'],
    ['an invisible character in a folder', 'no\u200Btes/a.txt', 'path_invalid'],
    ['NTFS stream (or drive A:)', 'a:stream', 'path_invalid'],
    ['NTFS stream', 'notes.txt:secret', 'path_invalid'],
    ['NTFS stream in a folder', 'docs/x.txt::$DATA', 'path_invalid'],
    ['reserved name', 'CON', 'path_invalid'],
    ['reserved name with extension', 'nul.txt', 'path_invalid'],
    ['reserved name in a folder', 'docs/com1.log', 'path_invalid'],
    ['trailing dot', 'name.', 'path_invalid'],
    ['trailing space', 'name ', 'path_invalid'],
    ['tilde expansion', '~/x', 'path_invalid'],
    ['tilde user', '~root/x', 'path_invalid'],
    ['empty', '', 'path_invalid'],
    ['a number', 123, 'path_invalid'],
    ['null', null, 'path_invalid'],
    ['an object', { path: 'x' }, 'path_invalid'],
    ['too long', 'a'.repeat(2000), 'path_invalid'],
    ['segment over 255 bytes', `${'é'.repeat(128)}.txt`, 'path_invalid'],
    ['a folder (trailing slash)', 'notes/', 'path_invalid'],
    ['the root itself', '.', 'path_invalid'],
  ])('%s (%j) → %s', async (_label, input, code) => {
    const failure = await refusal(sandbox.resolve(input));
    expect(failure.code).toBe(code);
  });

  it('says what to do in the message, with home shortened to ~', async () => {
    const home = createFilesSandbox({
      roots: () => [path.join(os.homedir(), 'Documents', 'Advent Agent')],
      maxFileBytes: () => 1024,
    });
    const failure = await refusal(home.resolve('../x'));
    expect(failure.message).toBe(
      `'../x' points outside the allowed folders; use a path inside ~${path.sep}Documents${path.sep}Advent Agent`,
    );
  });

  it('shows invisible characters in messages instead of echoing them', async () => {
    const failure = await refusal(sandbox.resolve('evil\u202Etxt.exe'));
    expect(failure.message).toContain('\\u202e');
    expect(failure.message).not.toContain('\u202E');
  });

  it('names an invisible character by its code point and place, never echoing it', async () => {
    expect((await refusal(sandbox.resolve('no\u200Btes.txt'))).message).toBe(
      "'no\\u200btes.txt' contains an invisible character (U+200B, character 3 of the file name); remove it",
    );
    // Characters, not UTF-16 units: the emoji before it is one.
    expect((await refusal(sandbox.resolveEntry('\u{1F600} no\u200Btes', 'folder'))).message).toBe(
      "'\u{1F600} no\\u200btes' contains an invisible character (U+200B, character 5 of the path); remove it",
    );
    const tags = await refusal(sandbox.resolve('notes.txt\u{E0049}\u{E0047}'));
    expect(tags.message).toBe(
      "'notes.txt\\u{E0049}\\u{E0047}' contains an invisible character (U+E0049, character 10 of the file name); remove it",
    );
    // Refused for another reason, the name is still echoed without its hidden characters.
    const scotland = '\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}';
    for (const input of ['a\u0007b\u{E0041}', 'a\u202Eb\u2028', `${scotland}.`]) {
      expect(hasUnsafeChars((await refusal(sandbox.resolve(input))).message)).toBe(false);
    }
  });

  it('refuses absolute paths inside a root only when they are really inside', async () => {
    const ok = await sandbox.resolve(path.join(root, 'a.txt'));
    expect(ok.absolute).toBe(path.join(root, 'a.txt'));
    // A sibling whose name starts like the root: string prefixes would let this through.
    const failure = await refusal(sandbox.resolve(`${root}-evil/a.txt`));
    expect(failure.code).toBe('path_outside_roots');
  });

  it('refuses a name that is an existing folder', async () => {
    await mkdir(path.join(root, 'notes'));
    expect((await refusal(sandbox.resolve('notes'))).code).toBe('path_invalid');
  });

  it('refuses a path that goes through a file as if it were a folder', async () => {
    await writeFile(path.join(root, 'file.txt'), 'x');
    expect((await refusal(sandbox.resolve('file.txt/inner.txt'))).code).toBe('path_invalid');
  });

  it('refuses everything when no root is configured', async () => {
    const none = createFilesSandbox({ roots: () => [], maxFileBytes: () => 1 });
    expect((await refusal(none.resolve('a.txt'))).code).toBe('path_outside_roots');
  });
});

describe('resolve accepts ordinary names', () => {
  it('resolves relative paths against the first root and reports existence', async () => {
    const fresh = await sandbox.resolve('notes/todo.txt');
    expect(fresh).toEqual({
      root,
      relative: path.join('notes', 'todo.txt'),
      absolute: path.join(root, 'notes', 'todo.txt'),
      exists: false,
    });
    await writeFile(path.join(root, 'here.txt'), 'x');
    expect((await sandbox.resolve('./here.txt')).exists).toBe(true);
  });

  it('treats backslashes as separators', async () => {
    expect((await sandbox.resolve('notes\\todo.txt')).absolute).toBe(
      path.join(root, 'notes', 'todo.txt'),
    );
  });

  it('accepts a root that does not exist yet', async () => {
    const later = path.join(outside, 'not', 'yet');
    const s = createFilesSandbox({ roots: () => [later], maxFileBytes: () => 100 });
    const target = await s.resolve('a/b.txt');
    expect(target.exists).toBe(false);
    await s.writeNew(target, 'hi');
    expect(await readFile(path.join(later, 'a', 'b.txt'), 'utf8')).toBe('hi');
  });

  it('accepts names with spaces, dots inside, unicode and a leading dot', async () => {
    for (const name of ['my notes.txt', 'a.b.c', '日记/今天.md', '.hidden', 'emoji 😀.txt']) {
      expect((await sandbox.resolve(name)).exists).toBe(false);
    }
  });

  it('accepts the names people give files, invisible joiners inside emoji and words included', async () => {
    const names = [
      '简体中文/会议记录.txt',
      '日本語のメモ.md',
      '한국어 문서.txt',
      'caf\u00E9 composed.txt',
      'cafe\u0301 decomposed.txt',
      'no\u00A0break space.txt',
      'wide\u3000space.txt',
      'emoji \u{1F600}.txt',
      // A family, a technologist with a skin tone, the rainbow flag: parts joined by U+200D.
      '\u{1F468}\u200D\u{1F469}\u200D\u{1F467} photos.txt',
      '\u{1F9D1}\u{1F3FD}\u200D\u{1F4BB} code.md',
      '\u{1F3F3}\uFE0F\u200D\u{1F308}.txt',
      // The flag of Scotland: a black flag and tag characters.
      '\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F} trip.txt',
      '1\uFE0F\u20E3 first.txt',
      // Persian 'ketab-ha' (books), written with U+200C as Persian keyboards type it.
      '\u06A9\u062A\u0627\u0628\u200C\u0647\u0627.txt',
      'ملاحظات.txt',
    ];
    for (const name of names) {
      const target = await sandbox.resolve(name);
      expect(target.exists).toBe(false);
      await sandbox.writeNew(target, name);
    }
    for (const name of names) {
      expect(await readFile(path.join(root, ...name.split('/')), 'utf8')).toBe(name);
    }
    expect(await readdir(root)).toEqual(
      expect.arrayContaining(names.filter((n) => !n.includes('/'))),
    );
  });
});

describe('resolve follows symlinks and fails closed', () => {
  it('refuses a folder link inside the root that points outside', async () => {
    await symlink(outside, path.join(root, 'out'), 'dir');
    const failure = await refusal(sandbox.resolve('out/x.txt'));
    expect(failure.code).toBe('path_outside_roots');
  });

  it('refuses a file link inside the root that points outside', async () => {
    await writeFile(path.join(outside, 'secret.txt'), 'secret');
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'evil.txt'));
    const failure = await refusal(sandbox.resolve('evil.txt'));
    expect(failure.code).toBe('path_outside_roots');
  });

  it('refuses a dangling link at the target and on the way', async () => {
    await symlink(path.join(root, 'nowhere'), path.join(root, 'dangling'));
    expect((await refusal(sandbox.resolve('dangling'))).code).toBe('path_invalid');
    expect((await refusal(sandbox.resolve('dangling/x.txt'))).code).toBe('path_invalid');
  });

  it('refuses a symlink loop', async () => {
    await symlink(path.join(root, 'b'), path.join(root, 'a'));
    await symlink(path.join(root, 'a'), path.join(root, 'b'));
    expect((await refusal(sandbox.resolve('a/x.txt'))).code).toBe('path_invalid');
    expect((await refusal(sandbox.resolve('a'))).code).toBe('path_invalid');
  });

  it('allows a link within the root to another place in the root', async () => {
    await mkdir(path.join(root, 'real'));
    await symlink(path.join(root, 'real'), path.join(root, 'link'), 'dir');
    const target = await sandbox.resolve('link/x.txt');
    await sandbox.writeNew(target, 'through the link');
    expect(await readFile(path.join(root, 'real', 'x.txt'), 'utf8')).toBe('through the link');
  });

  it('allows a root that is itself a link', async () => {
    const linkRoot = path.join(outside, 'root-link');
    await symlink(root, linkRoot, 'dir');
    const s = createFilesSandbox({ roots: () => [linkRoot], maxFileBytes: () => 100 });
    await s.writeNew(await s.resolve('x.txt'), 'ok');
    expect(await readFile(path.join(root, 'x.txt'), 'utf8')).toBe('ok');
  });
});

// Both ways of holding a folder (folder.ts): Linux uses `anchored`; macOS and Windows `checked`.
describe.each(['anchored', 'checked'] as const)('with %s folders', (holdMode) => {
  beforeEach(() => {
    sandbox = createFilesSandbox({ roots: () => [root], maxFileBytes: () => maxBytes, holdMode });
  });

  describe('writeNew', () => {
    it('creates nested folders and writes the bytes', async () => {
      const target = await sandbox.resolve('a/b/c/file.txt');
      await sandbox.writeNew(target, 'héllo');
      expect(await readFile(path.join(root, 'a', 'b', 'c', 'file.txt'), 'utf8')).toBe('héllo');
    });

    it('never overwrites (wx), even when the file appears after resolve', async () => {
      const target = await sandbox.resolve('race.txt');
      await writeFile(path.join(root, 'race.txt'), 'original');
      const failure = await refusal(sandbox.writeNew(target, 'new'));
      expect(failure.code).toBe('file_exists');
      expect(await readFile(path.join(root, 'race.txt'), 'utf8')).toBe('original');
    });

    it('never writes through a link placed at the target after resolve', async () => {
      const target = await sandbox.resolve('late-link.txt');
      await symlink(path.join(outside, 'victim.txt'), path.join(root, 'late-link.txt'));
      expect((await refusal(sandbox.writeNew(target, 'x'))).code).toBe('file_exists');
      await expect(stat(path.join(outside, 'victim.txt'))).rejects.toThrow();
    });

    it('re-checks containment after resolve (a folder swapped for a link)', async () => {
      const target = await sandbox.resolve('sub/new/x.txt');
      await symlink(outside, path.join(root, 'sub'), 'dir');
      expect((await refusal(sandbox.writeNew(target, 'x'))).code).toBe('path_outside_roots');
      expect(await readdir(outside)).toEqual([]);
    });

    it('leaves no temp file behind, and keeps the permissions a new file normally gets', async () => {
      await sandbox.writeNew(await sandbox.resolve('notes/a.txt'), 'a');
      expect(await readdir(path.join(root, 'notes'))).toEqual(['a.txt']);
      expect((await stat(path.join(root, 'notes', 'a.txt'))).mode & 0o777).toBe(
        0o666 & ~process.umask(),
      );
    });

    it("draws another temp name when someone else's file has it, and leaves that file alone", async () => {
      const taken = `.advent-${seededIds(5).hex(16)}.tmp`;
      await writeFile(path.join(root, taken), 'theirs');
      const s = createFilesSandbox({
        roots: () => [root],
        maxFileBytes: () => 100,
        ids: seededIds(5),
        holdMode,
      });
      await s.writeNew(await s.resolve('mine.txt'), 'mine');
      expect(await readFile(path.join(root, 'mine.txt'), 'utf8')).toBe('mine');
      expect(await readFile(path.join(root, taken), 'utf8')).toBe('theirs');
      expect((await readdir(root)).sort()).toEqual([taken, 'mine.txt'].sort());
    });

    it('refuses content above the size cap', async () => {
      const target = await sandbox.resolve('big.txt');
      const failure = await refusal(sandbox.writeNew(target, 'x'.repeat(maxBytes + 1)));
      expect(failure.code).toBe('file_too_large');
      expect(failure.message).toMatch(/1\.0 KB/);
      await expect(stat(path.join(root, 'big.txt'))).rejects.toThrow();
    });

    it('counts the cap in UTF-8 bytes, not characters', async () => {
      const target = await sandbox.resolve('wide.txt');
      const failure = await refusal(sandbox.writeNew(target, '字'.repeat(400))); // 1200 bytes
      expect(failure.code).toBe('file_too_large');
    });

    it('stops on an aborted signal and leaves no partial file', async () => {
      maxBytes = 8 * 1024 * 1024;
      const target = await sandbox.resolve('aborted.txt');
      const controller = new AbortController();
      const writing = sandbox.writeNew(target, new Uint8Array(maxBytes), controller.signal);
      controller.abort();
      expect((await refusal(writing)).code).toBe('cancelled');
      expect(await readdir(root)).toEqual([]);
    });

    it('refuses a target from a root that is no longer configured', async () => {
      const target = await sandbox.resolve('x.txt');
      const other = createFilesSandbox({ roots: () => [outside], maxFileBytes: () => 100 });
      expect((await refusal(other.writeNew(target, 'x'))).code).toBe('path_outside_roots');
      expect((await refusal(other.writeNew({ ...target, root: outside }, 'x'))).code).toBe(
        'path_outside_roots',
      );
    });
  });

  describe('replace', () => {
    it('swaps the content and leaves no temp file', async () => {
      await writeFile(path.join(root, 'doc.txt'), 'old');
      const target = await sandbox.resolve('doc.txt');
      expect(target.exists).toBe(true);
      await sandbox.replace(target, 'new');
      expect(await readFile(path.join(root, 'doc.txt'), 'utf8')).toBe('new');
      expect(await readdir(root)).toEqual(['doc.txt']);
    });

    it('keeps the old content when the write fails before the rename', async () => {
      maxBytes = 8 * 1024 * 1024;
      await writeFile(path.join(root, 'doc.txt'), 'old');
      const target = await sandbox.resolve('doc.txt');
      const controller = new AbortController();
      const replacing = sandbox.replace(target, new Uint8Array(maxBytes), controller.signal);
      controller.abort();
      expect((await refusal(replacing)).code).toBe('cancelled');
      expect(await readFile(path.join(root, 'doc.txt'), 'utf8')).toBe('old');
      expect(await readdir(root)).toEqual(['doc.txt']);
    });

    it('keeps the file mode of the file it replaces', async () => {
      await writeFile(path.join(root, 'private.txt'), 'old', { mode: 0o600 });
      await sandbox.replace(await sandbox.resolve('private.txt'), 'new');
      expect((await stat(path.join(root, 'private.txt'))).mode & 0o777).toBe(0o600);
    });

    it('replaces a link inside the root with a file instead of writing through it', async () => {
      await writeFile(path.join(root, 'real.txt'), 'real');
      await symlink(path.join(root, 'real.txt'), path.join(root, 'alias.txt'));
      await sandbox.replace(await sandbox.resolve('alias.txt'), 'alias');
      expect(await readFile(path.join(root, 'real.txt'), 'utf8')).toBe('real');
      expect(await readFile(path.join(root, 'alias.txt'), 'utf8')).toBe('alias');
    });

    it('refuses content above the size cap and leaves the file alone', async () => {
      await writeFile(path.join(root, 'doc.txt'), 'old');
      const failure = await refusal(
        sandbox.replace(await sandbox.resolve('doc.txt'), 'x'.repeat(maxBytes + 1)),
      );
      expect(failure.code).toBe('file_too_large');
      expect(await readFile(path.join(root, 'doc.txt'), 'utf8')).toBe('old');
    });
  });
});

describe('displayPath', () => {
  it('shortens the home folder to ~ and leaves other paths alone', () => {
    expect(displayPath('/home/ann/Documents/x', '/home/ann')).toBe(
      `~${path.sep}${path.join('Documents', 'x')}`,
    );
    expect(displayPath('/home/ann', '/home/ann')).toBe('~');
    expect(displayPath('/home/annex/x', '/home/ann')).toBe('/home/annex/x');
    expect(displayPath('/etc/passwd', '/home/ann')).toBe('/etc/passwd');
  });
});
