import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where enrich keeps its files. */
export interface EnrichPaths {
  /** Settings and keys (config.json, 0600 in a 0700 directory). */
  configDir: string;
  /** Run journals and other state worth keeping. */
  stateDir: string;
  /** Disposable data. */
  cacheDir: string;
}

/**
 * The OS directories of enrich: ENRICH_CONFIG_DIR / ENRICH_STATE_DIR / ENRICH_CACHE_DIR
 * when set, else XDG on Linux, ~/Library on macOS, %APPDATA% / %LOCALAPPDATA% on Windows.
 */
export function getPaths(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): EnrichPaths {
  const name = 'enrich';
  let os: EnrichPaths;
  if (platform === 'darwin') {
    const lib = join(home, 'Library');
    os = {
      configDir: join(lib, 'Preferences', name),
      stateDir: join(lib, 'Application Support', name),
      cacheDir: join(lib, 'Caches', name),
    };
  } else if (platform === 'win32') {
    const appData = env.APPDATA || join(home, 'AppData', 'Roaming');
    const local = env.LOCALAPPDATA || join(home, 'AppData', 'Local');
    os = {
      configDir: join(appData, name, 'Config'),
      stateDir: join(local, name, 'State'),
      cacheDir: join(local, name, 'Cache'),
    };
  } else {
    os = {
      configDir: join(env.XDG_CONFIG_HOME || join(home, '.config'), name),
      stateDir: join(env.XDG_STATE_HOME || join(home, '.local', 'state'), name),
      cacheDir: join(env.XDG_CACHE_HOME || join(home, '.cache'), name),
    };
  }
  return {
    configDir: env.ENRICH_CONFIG_DIR || os.configDir,
    stateDir: env.ENRICH_STATE_DIR || os.stateDir,
    cacheDir: env.ENRICH_CACHE_DIR || os.cacheDir,
  };
}
