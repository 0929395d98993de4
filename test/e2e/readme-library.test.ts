import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, tempEnv } from '../api/harness.js';

beforeAll(ensureBuilt, 120_000);

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The ```ts blocks of the README's "Using it as a library" section. */
async function libraryExamples(): Promise<string[]> {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('## Using it as a library');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

describe('README: "Using it as a library"', () => {
  it('every example runs as written, against the built package', async () => {
    const examples = await libraryExamples();
    expect(examples.length).toBeGreaterThanOrEqual(2);
    // Run where a user would: a directory of their own, with the fixtures the examples name.
    const dir = await mkdtemp(join(tmpdir(), 'enrich-readme-'));
    await symlink(join(root, 'fixtures'), join(dir, 'fixtures'));
    for (const [i, code] of examples.entries()) {
      const file = join(dir, `example-${i}.mjs`);
      // The only change: 'enrich-cli' is this checkout's build (an .mjs file runs the TS as
      // written, since the examples hold no type annotations).
      await writeFile(file, code.replaceAll("from 'enrich-cli'", `from '${root}dist/index.js'`));
      const r = spawnSync(process.execPath, [file], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', HOME: dir, ...(await tempEnv()) },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(r.stderr, `example ${i + 1}`).toBe('');
      expect(r.status, `example ${i + 1}`).toBe(0);
    }
    // The enrichFile example wrote its output where it said.
    const out = await readFile(join(dir, 'enriched.csv'), 'utf8');
    expect(out.split('\n')[0]).toMatch(/enrich_status,enrich_error,enrich_credit_charged/);
  });
});
