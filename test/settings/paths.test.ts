import { describe, expect, it } from 'vitest';
import {
  defaultDataDir,
  defaultFilesRoot,
  systemDataDir,
  systemFilesRoot,
} from '../../app/settings/paths.js';

describe('defaultDataDir', () => {
  it('uses XDG_DATA_HOME on Linux when it is set and absolute', () => {
    expect(
      defaultDataDir({
        platform: 'linux',
        env: { XDG_DATA_HOME: '/data/me' },
        homedir: '/home/me',
      }),
    ).toBe('/data/me/advent-agent');
  });

  it('falls back to ~/.local/share on Linux when XDG_DATA_HOME is unset, blank or relative', () => {
    for (const env of [{}, { XDG_DATA_HOME: '  ' }, { XDG_DATA_HOME: 'relative/dir' }]) {
      expect(defaultDataDir({ platform: 'linux', env, homedir: '/home/me' })).toBe(
        '/home/me/.local/share/advent-agent',
      );
    }
  });

  it('uses Application Support on macOS and ignores XDG variables there', () => {
    expect(
      defaultDataDir({ platform: 'darwin', env: { XDG_DATA_HOME: '/x' }, homedir: '/Users/me' }),
    ).toBe('/Users/me/Library/Application Support/Advent Agent');
  });

  it('uses %APPDATA% on Windows, or AppData\\Roaming under the home folder without it', () => {
    expect(
      defaultDataDir({ platform: 'win32', env: { APPDATA: 'D:\\Roam' }, homedir: 'C:\\Users\\me' }),
    ).toBe('D:\\Roam\\Advent Agent');
    expect(defaultDataDir({ platform: 'win32', env: {}, homedir: 'C:\\Users\\me' })).toBe(
      'C:\\Users\\me\\AppData\\Roaming\\Advent Agent',
    );
  });
});

describe('defaultFilesRoot', () => {
  it('is ~/Documents/Advent Agent on every platform by default', () => {
    expect(defaultFilesRoot({ platform: 'linux', env: {}, homedir: '/home/me' })).toBe(
      '/home/me/Documents/Advent Agent',
    );
    expect(defaultFilesRoot({ platform: 'darwin', env: {}, homedir: '/Users/me' })).toBe(
      '/Users/me/Documents/Advent Agent',
    );
    expect(defaultFilesRoot({ platform: 'win32', env: {}, homedir: 'C:\\Users\\me' })).toBe(
      'C:\\Users\\me\\Documents\\Advent Agent',
    );
  });

  it('honours XDG_DOCUMENTS_DIR on Linux, including the $HOME form of user-dirs.dirs', () => {
    expect(
      defaultFilesRoot({
        platform: 'linux',
        env: { XDG_DOCUMENTS_DIR: '/srv/docs' },
        homedir: '/home/me',
      }),
    ).toBe('/srv/docs/Advent Agent');
    expect(
      defaultFilesRoot({
        platform: 'linux',
        env: { XDG_DOCUMENTS_DIR: '$HOME/Dokumente' },
        homedir: '/home/me',
      }),
    ).toBe('/home/me/Dokumente/Advent Agent');
  });

  it('ignores XDG_DOCUMENTS_DIR outside Linux', () => {
    expect(
      defaultFilesRoot({
        platform: 'darwin',
        env: { XDG_DOCUMENTS_DIR: '/srv/docs' },
        homedir: '/Users/me',
      }),
    ).toBe('/Users/me/Documents/Advent Agent');
  });

  it('gives absolute paths for the running process', () => {
    expect(systemDataDir()).toMatch(/advent-agent$|Advent Agent$/);
    expect(systemFilesRoot()).toMatch(/Advent Agent$/);
  });
});
