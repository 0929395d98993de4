import { describe, expect, it } from 'vitest';
import { getPaths } from '../../src/config/paths.js';

describe('getPaths', () => {
  it('honours ENRICH_CONFIG_DIR, ENRICH_STATE_DIR and ENRICH_CACHE_DIR', () => {
    const env = { ENRICH_CONFIG_DIR: '/c', ENRICH_STATE_DIR: '/s', ENRICH_CACHE_DIR: '/k' };
    expect(getPaths(env, 'linux', '/home/u')).toEqual({
      configDir: '/c',
      stateDir: '/s',
      cacheDir: '/k',
    });
  });

  it('uses XDG directories on Linux', () => {
    expect(getPaths({}, 'linux', '/home/u')).toEqual({
      configDir: '/home/u/.config/enrich',
      stateDir: '/home/u/.local/state/enrich',
      cacheDir: '/home/u/.cache/enrich',
    });
    expect(getPaths({ XDG_CONFIG_HOME: '/x' }, 'linux', '/home/u').configDir).toBe('/x/enrich');
  });

  it('uses ~/Library on macOS and %APPDATA% on Windows', () => {
    expect(getPaths({}, 'darwin', '/Users/u').configDir).toBe(
      '/Users/u/Library/Preferences/enrich',
    );
    expect(getPaths({}, 'darwin', '/Users/u').cacheDir).toBe('/Users/u/Library/Caches/enrich');
    const win = getPaths({ APPDATA: 'A', LOCALAPPDATA: 'L' }, 'win32', 'H');
    expect(win.configDir).toMatch(/^A.enrich.Config$/);
    expect(win.stateDir).toMatch(/^L.enrich.State$/);
  });
});
