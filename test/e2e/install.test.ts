import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../api/harness.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = join(root, 'fixtures/contacts.csv');

interface PackageJson {
  name: string;
  version: string;
  license: string;
  bin: Record<string, string>;
  engines: Record<string, string>;
  dependencies: Record<string, string>;
}
type LockEntry = Record<string, unknown> & { dev?: boolean };

/**
 * A throwaway project that depends on the packed tarball, locked to the exact versions of
 * this repository's lockfile (its runtime dependencies only), so `npm ci --offline` installs
 * it from the npm cache: what a user gets from `npm install -g ./enrich-cli-<v>.tgz` or the
 * registry, with no network and no registry metadata needed.
 */
async function installTarball(tmp: string, tgz: string, pkg: PackageJson): Promise<string> {
  const lock = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const app = join(tmp, 'app');
  await mkdir(app);
  const spec = `file:../${tgz}`;
  const packages: Record<string, unknown> = {
    '': { name: 'app', dependencies: { [pkg.name]: spec } },
    [`node_modules/${pkg.name}`]: {
      version: pkg.version,
      resolved: spec,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages))
    if (path !== '' && entry.dev !== true) packages[path] = entry;
  const manifest = { name: 'app', private: true, dependencies: { [pkg.name]: spec } };
  await writeFile(join(app, 'package.json'), JSON.stringify(manifest));
  await writeFile(
    join(app, 'package-lock.json'),
    JSON.stringify({ name: 'app', lockfileVersion: 3, requires: true, packages }),
  );
  await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: app });
  return join(app, 'node_modules', '.bin', 'enrich');
}

describe('the packed package, installed where a user would (npm pack, then an offline install)', () => {
  let tmp = '';
  let enrich = '';
  let files: string[] = [];
  let pkg: PackageJson;

  beforeAll(async () => {
    await ensureBuilt();
    pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as PackageJson;
    tmp = await mkdtemp(join(tmpdir(), 'enrich-install-'));
    // --ignore-scripts: dist/ is built already; prepack would rebuild it under the other tests.
    const { stdout } = await run(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp],
      { cwd: root },
    );
    const packed = (JSON.parse(stdout) as { filename: string; files: { path: string }[] }[])[0];
    if (!packed) throw new Error('npm pack packed nothing');
    files = packed.files.map((f) => f.path);
    enrich = await installTarball(tmp, packed.filename, pkg);
  }, 180_000);

  afterAll(() => rm(tmp, { recursive: true, force: true }));

  it('is published under a name of its own and installs the `enrich` command', () => {
    // `enrich` on the registry is not this package: `npx enrich` would run someone else's.
    expect(pkg.name).toBe('enrich-cli');
    expect(pkg.bin).toEqual({ enrich: 'bin/enrich.js' });
    expect(files).toEqual(expect.arrayContaining(['bin/enrich.js', 'dist/cli/main.js']));
    expect(files.filter((f) => /^(src|test|fixtures)\//.test(f))).toEqual([]);
  });

  it("agrees with the README: its Node version, install step and CI recipe, and the quick start's output ignored by git", async () => {
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    const needs = /Requires Node\.js (\S+) or newer/.exec(readme)?.[1];
    expect(`>=${needs}`).toBe(pkg.engines.node);
    expect(readme).toContain('npm install -g .');
    expect(readme).toContain(`npm install -g ${pkg.name}`);
    expect(readme).toContain(`npx --yes --package ${pkg.name}@${pkg.version} enrich `);
    expect(readme).not.toMatch(/npx enrich contacts/);
    const ignored = await run('git', ['check-ignore', 'enriched.csv'], { cwd: root });
    expect(ignored.stdout.trim()).toBe('enriched.csv');
  });

  it('runs the quick start from another directory: `enrich contacts <file> --sandbox -o out.csv`', async () => {
    const elsewhere = join(tmp, 'elsewhere');
    await mkdir(elsewhere);
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: elsewhere,
      ENRICH_CONFIG_DIR: join(elsewhere, 'config'),
      ENRICH_STATE_DIR: join(elsewhere, 'state'),
      ENRICH_CACHE_DIR: join(elsewhere, 'cache'),
    };
    const r = await run(enrich, ['contacts', fixture, '--sandbox', '-o', 'out.csv'], {
      cwd: elsewhere,
      env,
    });
    expect(r.stderr).toMatch(/^rows: 25 {2}enriched: 23 /m);
    const out = await readFile(join(elsewhere, 'out.csv'), 'utf8');
    expect(out.trimEnd().split('\n')).toHaveLength(26);
    expect(out.split('\n')[0]).toContain('enrich_status');

    const version = await run(enrich, ['--version'], { cwd: elsewhere, env });
    expect(version.stdout.trim()).toBe(pkg.version);
  });
});
