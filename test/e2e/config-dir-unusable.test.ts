import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';

beforeAll(ensureBuilt, 120_000);

/**
 * ENRICH_CONFIG_DIR (or XDG_CONFIG_HOME/enrich) pointing at a file, or below one, is the user's
 * set-up to fix: a usage-class error (exit 2) naming the directory and the variable, never an
 * internal error (exit 1, "please report it") with a raw EEXIST/ENOTDIR, for every command that
 * reads settings.
 */
describe('a config directory that cannot be used', () => {
  it.concurrent.for([
    [
      'a file in its place',
      (f: string) => f,
      /config directory cannot be used: .* is not a directory/,
    ],
    ['below a file', (f: string) => join(f, 'enrich'), /a part of the path .* is not a directory/],
  ] as const)('%s: exit 2 naming it', async ([, dirOf, message]) => {
    const env = await tempEnv();
    mkdirSync(env.ENRICH_STATE_DIR!, { recursive: true });
    const file = join(env.ENRICH_STATE_DIR!, 'not-a-dir');
    writeFileSync(file, 'x');
    const dir = dirOf(file);
    for (const args of [
      ['config', 'list'],
      ['config', 'set', 'batch_size', '5'],
      ['auth', 'status'],
      ['contacts', 'fixtures/contacts.csv', '--dry-run', '-q'],
    ]) {
      const r = await runCli(args, { env: { ...env, ENRICH_CONFIG_DIR: dir } });
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr).toContain('[FILE_SYSTEM]');
      expect(r.stderr).toContain('ENRICH_CONFIG_DIR');
      expect(r.stderr).not.toMatch(/internal error|EEXIST|ENOTDIR/);
      expect(r.stdout).toBe('');
      expect(r.code).toBe(2);
    }
  });
});
