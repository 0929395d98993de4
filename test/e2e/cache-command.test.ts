import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { CONTACT_HEADER, contactRows, tempDir, writeCsv } from '../integration/bulk-harness.js';
import { openResultsCache } from '../../src/cache/results-cache.js';
import { CACHE_FILE } from '../../src/cache/lmdb-file.js';
import { rootTest } from '../helpers/root.js';
import { withTmpfs } from '../helpers/tmpfs.js';
import { deadPid } from '../helpers/pids.js';

let sb: SandboxHandle;
beforeAll(async () => {
  await ensureBuilt();
  sb = await startSandbox({ port: 0, jobMs: 0 });
});
afterAll(() => sb.close());

/** The files under `dir` (recursively) whose bytes hold `text`. */
async function filesHolding(dir: string, text: string): Promise<string[]> {
  const found: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const path = join(e.parentPath, e.name);
    if ((await readFile(path)).includes(text)) found.push(path);
  }
  return found;
}

describe('enrich with the results cache, and enrich cache stats | prune | clear (e2e)', () => {
  it('a second run of grown rows pays for the new row only, says so, and clear erases the cache', async () => {
    const env: Record<string, string> = {
      ...(await tempEnv()),
      ENRICH_BASE_URL: sb.url,
      ENRICH_API_KEY: sb.apiKey,
    };
    const dir = await tempDir();
    const rows = contactRows(8);
    const day1 = await writeCsv(dir, 'new.csv', CONTACT_HEADER, rows);
    const first = await runCli(['contacts', day1, '-o', join(dir, 'o1.csv'), '--no-progress'], {
      env,
    });
    expect(first.code).toBe(0);
    const day2 = await writeCsv(dir, 'new.csv', CONTACT_HEADER, [
      ...rows,
      ['X1', 'New', 'Row', 'new.row@fresh.io', 'Fresh', ''],
    ]);
    const dry = await runCli(['contacts', day2, '--dry-run', '--json'], { env });
    expect(JSON.parse(dry.stdout)).toMatchObject({ cached: 8, max_credits: 1 });
    const second = await runCli(
      ['contacts', day2, '-o', join(dir, 'o2.csv'), '--json', '--no-progress'],
      { env },
    );
    expect(second.code).toBe(0);
    expect(second.stderr).not.toMatch(/changed since/);
    expect(JSON.parse(second.stdout)).toMatchObject({
      credits_charged: 1,
      cache: { hits: 8, credits_saved: 8 },
    });
    expect(await readFile(join(dir, 'o2.csv'), 'utf8')).toContain('enrich_cached_at');

    const stats = await runCli(['cache', 'stats', '--json'], { env });
    expect(JSON.parse(stats.stdout)).toMatchObject({ answers: 9, charged: 9 });
    const typo = await runCli(['cache', 'prune', '--older-than', 'abc'], { env });
    expect([typo.code, typo.stderr.trim()]).toEqual([
      2,
      'enrich: --older-than: expected a duration such as 500ms, 30s, 5m, 2h or 7d, got "abc" [USAGE]',
    ]);
    const pruned = await runCli(['cache', 'prune', '--older-than', '0s', '--json'], { env });
    expect(JSON.parse(pruned.stdout)).toMatchObject({ answers_removed: 9 });
    await runCli(['contacts', day2, '-o', join(dir, 'o3.csv'), '--restart', '-q'], { env });
    const cleared = await runCli(['cache', 'clear'], { env });
    expect(cleared.code).toBe(0);
    expect(await readdir(env.ENRICH_CACHE_DIR as string)).toEqual([]);
    // The finished runs' journals and results hold contact data too (regression: they stayed).
    const state = env.ENRICH_STATE_DIR as string;
    expect(await filesHolding(state, 'new.row@fresh.io')).toEqual([]);
    expect(cleared.stderr).toMatch(/removed 2 run\(s\) from /);

    // A run not finished (killed after its results were spooled, before its output was
    // written: its journal without the closing `done`) is kept, and said; --unfinished erases it.
    const ran = await runCli(['contacts', day2, '-o', join(dir, 'o4.csv'), '-q'], { env });
    expect(ran.code).toBe(0);
    const runsDir = join(state, 'runs');
    // The one run: hidden entries beside it are locks (of its output file).
    const [runDir] = (await readdir(runsDir)).filter((n) => !n.startsWith('.'));
    const journal = join(runsDir, runDir as string, 'journal.jsonl');
    const lines = (await readFile(journal, 'utf8')).trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^\{"t":"done"/);
    await writeFile(journal, `${lines.slice(0, -1).join('\n')}\n`);
    expect(await filesHolding(state, 'person0@')).not.toEqual([]);
    const kept = await runCli(['cache', 'clear', '--json'], { env });
    expect(kept.code).toBe(0);
    expect(JSON.parse(kept.stdout)).toMatchObject({ runs_removed: 0, runs_kept: 1 });
    expect(kept.stderr).toMatch(/kept 1 unfinished run\(s\) in .*enrich cache clear --unfinished/);
    const all = await runCli(['cache', 'clear', '--unfinished', '--json'], { env });
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({ runs_removed: 1, runs_kept: 0 });
    expect(await filesHolding(state, 'new.row@fresh.io')).toEqual([]);
    expect(await filesHolding(state, 'person0@')).toEqual([]);
  });

  it('ENRICH_CACHE_DIR naming a file: stats, prune and clear fail with FILE_SYSTEM (exit 2) naming it, in their own words, and leave the file (regression: clear crashed, exit 1; prune said "removed 0" and "every row is sent")', async () => {
    const env = await tempEnv();
    const file = join(await tempDir(), 'c_file');
    await writeFile(file, 'important');
    env.ENRICH_CACHE_DIR = file;
    for (const args of [['stats'], ['prune'], ['clear'], ['clear', '--unfinished']]) {
      const r = await runCli(['cache', ...args], { env });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(
        `the results cache in ${file} cannot be used (${file} is not a directory)`,
      );
      expect(r.stderr).toMatch(/\[FILE_SYSTEM\]\nhint: Set ENRICH_CACHE_DIR to a directory/);
      expect(r.stderr).not.toMatch(/internal error|every row is sent|going on without it/);
    }
    expect(await readFile(file, 'utf8')).toBe('important');
  });

  it('a directory where the cache file goes: stats, prune and clear name it and say to move it, never to run cache clear (which cannot remove it; regression: it said so)', async () => {
    const env = await tempEnv();
    const dir = env.ENRICH_CACHE_DIR as string;
    const where = join(dir, CACHE_FILE);
    await mkdir(join(where, 'inside'), { recursive: true });
    for (const args of [['stats'], ['prune'], ['clear']]) {
      const r = await runCli(['cache', ...args], { env });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`(${where} is a directory, not the cache's file)`);
      expect(r.stderr.toLowerCase()).toContain(
        `move or remove ${where} (enrich makes the file there)`.toLowerCase(),
      );
      expect(r.stderr).not.toMatch(/cache clear starts a new one|internal error/);
    }
    expect((await stat(join(where, 'inside'))).isDirectory()).toBe(true);
  });

  it('enrich cache stats on a damaged cache: exit 2 saying so, never "answers 0" (regression: exit 0); prune says it in its own words', async () => {
    const env = await tempEnv();
    const dir = env.ENRICH_CACHE_DIR as string;
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, CACHE_FILE), Buffer.alloc(8192, 0x5a));
    const stats = await runCli(['cache', 'stats', '--json'], { env });
    expect(stats.code).toBe(2);
    expect(stats.stdout).toBe('');
    expect(stats.stderr).toMatch(
      /the results cache in .* cannot be read \(.*damaged.*\[FILE_SYSTEM\]\nhint: enrich cache clear starts a new one/s,
    );
    const pruned = await runCli(['cache', 'prune'], { env });
    expect(pruned.code).toBe(2);
    expect(pruned.stdout).not.toContain('cached answer(s)');
    expect(pruned.stderr).toMatch(/the results cache in .* was not pruned: it cannot be opened/);
    expect(pruned.stderr).not.toMatch(/every row is sent|going on without it/);
    expect((await runCli(['cache', 'clear'], { env })).code).toBe(0);
    const fresh = await runCli(['cache', 'stats', '--json'], { env });
    expect(fresh.code).toBe(0);
    expect(JSON.parse(fresh.stdout)).toMatchObject({ answers: 0 });
  });

  it('cache clear removes the lock directories and claims runs that were killed left (an address claim is named for a hash of the address, a row claim is a hash of its request); a held one stays', async () => {
    const env = await tempEnv();
    const runs = join(env.ENRICH_STATE_DIR as string, 'runs');
    const lock = async (dir: string, pid: number) => {
      await mkdir(join(runs, dir), { recursive: true });
      await writeFile(join(runs, dir, 'lock'), String(pid));
    };
    await mkdir(join(runs, '.verify-claims-acct'), { recursive: true });
    await writeFile(join(runs, '.verify-claims-acct/5f0c1a'), String(deadPid()));
    await writeFile(join(runs, '.verify-claims-acct/9e2b7d'), String(process.ppid)); // going on now
    await lock('.outputs/3a4b5c', deadPid());
    await writeFile(join(runs, '.outputs/3a4b5c/holder.json'), '{"input":"leads.csv"}');
    await lock('.verify-turn-acct', deadPid()); // an earlier build's sending turn
    // A bulk run's row claims (hashes of its requests): a killed run's, and one going on now.
    await mkdir(join(runs, '.row-claims'), { recursive: true });
    await writeFile(join(runs, '.row-claims/1-a.claims'), `${deadPid()} \n+AbC\n`);
    await writeFile(join(runs, '.row-claims/2-b.claims'), `${process.ppid} \n+DeF\n`);
    await lock('.row-claims/.mutex', deadPid());
    const cleared = await runCli(['cache', 'clear', '--json'], { env });
    expect(cleared.code).toBe(0);
    expect(JSON.parse(cleared.stdout)).toMatchObject({ runs_removed: 0, runs_kept: 0 });
    expect((await readdir(runs)).sort()).toEqual(['.row-claims', '.verify-claims-acct']);
    expect(await readdir(join(runs, '.verify-claims-acct'))).toEqual(['9e2b7d']);
    expect(await readdir(join(runs, '.row-claims'))).toEqual(['2-b.claims']);
  });

  rootTest(
    '(root: a tmpfs) enrich cache prune on a full disk removes nothing and says so: exit 2 (FILE_SYSTEM), never 0',
    async () => {
      await withTmpfs('size=1m', async (small) => {
        const env = { ...(await tempEnv()), ENRICH_CACHE_DIR: join(small, 'cache') };
        // Answers written while the margin allowed it; the 1 MB disk is then under 64 MB free.
        const filled = openResultsCache(env.ENRICH_CACHE_DIR, () => undefined, { minFreeBytes: 0 });
        const scope = { baseUrl: 'u', account: 'a', kind: 'contacts', metadata: {} };
        for (let i = 0; i < 5; i++)
          filled?.scoped(scope).put(`r${i}`, { records: [], at: i, charged: true });
        await filled?.close();
        const pruned = await runCli(['cache', 'prune', '--older-than', '0s', '--json'], { env });
        expect(pruned.code).toBe(2);
        expect(JSON.parse(pruned.stdout)).toMatchObject({ answers_removed: 0 });
        expect(pruned.stderr).toMatch(
          /the results cache in .* was not pruned: the disk holding the results cache in .* has 0 MB free .*\[FILE_SYSTEM\]/,
        );
        expect(pruned.stderr.match(/has 0 MB free/g)).toHaveLength(1); // said once
        const stats = await runCli(['cache', 'stats', '--json'], { env });
        expect(JSON.parse(stats.stdout)).toMatchObject({ answers: 5 });
      });
    },
  );
});
