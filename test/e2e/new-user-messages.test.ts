import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import { tempDir } from '../integration/bulk-harness.js';

beforeAll(ensureBuilt, 120_000);

const fixtures = fileURLToPath(new URL('../../fixtures', import.meta.url));

/** Runs `enrich <args> --sandbox` in a fresh state directory. */
async function sandboxRun(args: string[]) {
  return runCli([...args, '--sandbox'], { env: await tempEnv() });
}

/** A file holding `text` in a fresh directory, with an output path beside it. */
async function input(name: string, text: string): Promise<{ file: string; out: string }> {
  const dir = await tempDir();
  const file = join(dir, name);
  await writeFile(file, text);
  return { file, out: join(dir, 'out.csv') };
}

describe('empty inputs, handled one way (e2e)', () => {
  it('a 0-byte file: exit 2, no header row, naming the file', async () => {
    const { file, out } = await input('empty.csv', '');
    const r = await sandboxRun(['contacts', file, '-o', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `enrich: ${file} has no header row (a line naming the columns): the file is empty (0 bytes) (${file}, line 1) [INPUT_INVALID]`,
    );
  });

  it('a file of spaces, tabs and blank lines: exit 2, no header row (never a column named "  ")', async () => {
    const { file, out } = await input('blank.csv', '  \t \n\n   \n');
    const r = await sandboxRun(['contacts', file, '-o', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /has no header row \(a line naming the columns\): the file holds only blank lines/,
    );
  });

  it('a header-only file: exit 0, nothing sent, an output of just the header', async () => {
    const { file, out } = await input('header.csv', 'Email,Company\n');
    const r = await sandboxRun(['contacts', file, '-o', out]);
    expect(r.code).toBe(0);
    const lines = (await readFile(out, 'utf8')).split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Email,Company,enrich_status,enrich_error,/);
  });

  it('--header-row past the end says so and how many lines there are, not "an empty file"', async () => {
    const r = await sandboxRun(['contacts', join(fixtures, 'contacts.csv'), '--header-row', '99']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /has no header row \(a line naming the columns\): --header-row 99 is past the end of the file \(it has 26 lines\)/,
    );
    expect(r.stderr).not.toMatch(/empty file/);
  });
});

describe('the wrong command for a file (e2e)', () => {
  it('contacts on a companies file suggests enrich companies (exit 2)', async () => {
    const r = await sandboxRun(['contacts', join(fixtures, 'companies.csv')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /\[MAPPING_INVALID\]\nhint: These columns look like a companies file: try enrich companies\. Or say which column/,
    );
  });

  it('companies on a file of people suggests enrich contacts (exit 2)', async () => {
    const { file } = await input(
      'people.csv',
      'Email,First Name,Last Name\nana@globex.example,Ana,Lopez\n',
    );
    const r = await sandboxRun(['companies', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /hint: These columns look like a contacts file: try enrich contacts\./,
    );
  });
});

describe('output paths that cannot be written (e2e)', () => {
  it('-o into a missing directory names the directory and how to create it, never a temp file', async () => {
    const dir = await tempDir();
    const out = join(dir, 'nodir', 'out.csv');
    const r = await sandboxRun(['contacts', join(fixtures, 'contacts.csv'), '-o', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `cannot write ${out}: its directory ${join(dir, 'nodir')} does not exist`,
    );
    expect(r.stderr).toContain(`hint: Create it first (mkdir -p ${join(dir, 'nodir')})`);
    expect(r.stderr).not.toMatch(/ENOENT|\.tmp/);
  });

  it('--rejects naming a directory suggests a file for --rejects, not -o', async () => {
    const dir = await tempDir();
    const r = await sandboxRun([
      'contacts',
      join(fixtures, 'contacts.csv'),
      '-o',
      join(dir, 'out.csv'),
      '--rejects',
      dir,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `hint: Name a file in it, for example --rejects ${join(dir, 'rejects.csv')}`,
    );
  });

  it('--save-mapping into a missing directory says how to create it', async () => {
    const dir = await tempDir();
    const target = join(dir, 'nodir', 'map.json');
    const r = await sandboxRun([
      'contacts',
      join(fixtures, 'contacts.csv'),
      '--dry-run',
      '--save-mapping',
      target,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /its directory .*nodir does not exist .*\[USAGE\]\nhint: Create it first \(mkdir -p /,
    );
  });
});

describe('hints in plain words (e2e)', () => {
  it('auth status --sandbox says why there is nothing to check (exit 2)', async () => {
    const r = await runCli(['auth', 'status', '--sandbox'], { env: await tempEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /--sandbox makes a fresh key of its own each time, so it needs no login.*\nhint: leave out --sandbox to check the key of a real service/,
    );
    expect(r.stderr).not.toMatch(/nothing to status/);
  });
});
