import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveRun } from '../../src/bulk/resolve-run.js';
import { openInput } from '../../src/io/read.js';
import { runKeyOf } from '../../src/pipeline/run/run.js';
import { CLI_WORDS } from '../../src/cli/commands/bulk/resolve.js';
import { tempDir } from '../integration/bulk-harness.js';

const SPLIT = 'Full Name,Email,Company\nJane Doe,jane@acme.com,Acme\nJohn Smith,,Globex\n';
// The identity journals written before the run was resolved in one place were keyed by
// (see git history: enrichFile's mappingJson with full_name). Pinned by value.
const PINNED_INPUT = {
  path: '/tmp/pin/split.csv',
  size: 71,
  sha256: '22070323b0bd6e6ba1ba116575ead725a41536d57937294cb0f5788115604802',
};

async function splitFile() {
  const dir = await tempDir('enrich-resolve-');
  const file = join(dir, 'split.csv');
  await writeFile(file, SPLIT);
  return { dir, file };
}

describe('resolveRun', () => {
  it("keeps the run key of journals already on disk (a split Name column, enrichFile's form)", async () => {
    const { file } = await splitFile();
    const source = await openInput(file);
    try {
      const run = await resolveRun({ kind: 'contacts', output: '-' }, source);
      expect(run.identity.mapping).toEqual({
        business_email: 'Email',
        company_name: 'Company',
        first_name: 'Full Name',
        last_name: 'Full Name',
        full_name: 'Full Name',
      });
      const { key } = runKeyOf(run, PINNED_INPUT, 'http://127.0.0.1:4010/some/path');
      expect(key).toBe('b6e854a3e6689f8a5a0a02c8d41d45d8');
      // The content is what was pinned: the same file gives the same identity as then.
      const identity = await source.identity();
      expect([identity.size, identity.sha256]).toEqual([PINNED_INPUT.size, PINNED_INPUT.sha256]);
    } finally {
      await source.close();
    }
  });

  it('gives the CLI, the library and a test harness one identity for one file', async () => {
    const { file } = await splitFile();
    const source = await openInput(file);
    try {
      const library = await resolveRun({ kind: 'contacts', output: 'x.csv' }, source);
      const cli = await resolveRun(
        { kind: 'contacts', output: 'x.csv', batchSize: 7, concurrency: 2, words: CLI_WORDS },
        source,
      );
      // Batch size, concurrency and words are not part of what was asked of the service.
      expect(cli.identity).toEqual(library.identity);
    } finally {
      await source.close();
    }
  });

  it('is frozen, refuses unknown options, and names options in the caller’s words', async () => {
    const { file } = await splitFile();
    const source = await openInput(file);
    try {
      const run = await resolveRun({ kind: 'contacts', output: 'out.jsonl' }, source);
      expect(Object.isFrozen(run)).toBe(true);
      expect(Object.isFrozen(run.output)).toBe(true);
      expect(run.output.format).toBe('jsonl');
      expect(() => {
        (run as { batchSize: number }).batchSize = 5;
      }).toThrow(TypeError);
      await expect(
        resolveRun({ kind: 'contacts', output: '-', maxCredit: 5 } as never, source),
      ).rejects.toMatchObject({ code: 'USAGE', message: 'bulk run: unknown option maxCredit' });
      await expect(
        resolveRun({ kind: 'contacts', output: '-', concurrency: 65 }, source),
      ).rejects.toMatchObject({ message: /^concurrency: expected an integer from 1 to 64/ });
      await expect(
        resolveRun({ kind: 'contacts', output: '-', concurrency: 65, words: CLI_WORDS }, source),
      ).rejects.toMatchObject({ message: /^--concurrency: expected an integer from 1 to 64/ });
      await expect(
        resolveRun({ kind: 'contacts', output: '-', request: { requireMobile: true } }, source),
      ).rejects.toMatchObject({ message: /^requireMobile needs mobile/ });
      // A blank prefix would write the fields under their bare names (regression: accepted).
      await expect(
        resolveRun({ kind: 'contacts', output: '-', prefix: ' ' }, source),
      ).rejects.toMatchObject({
        code: 'USAGE',
        message: /^prefix: expected a prefix such as enriched_, got " "/,
      });
    } finally {
      await source.close();
    }
  });

  it('takes the defaults of the settings table for what is left out', async () => {
    const { file } = await splitFile();
    const source = await openInput(file);
    try {
      const run = await resolveRun({ kind: 'companies', output: '-', request: { top: 3 } }, source);
      expect(run).toMatchObject({
        batchSize: 1000,
        concurrency: undefined,
        timeoutMs: 7_200_000,
        dedupe: true,
        wait: true,
        creditsPerRow: 3,
        metadata: { top_matches_returned: 3 },
        output: { format: 'csv', prefix: 'enriched_', formulaEscape: 'auto', bom: false },
      });
    } finally {
      await source.close();
    }
  });

  it('writes an Excel sep= line to a CSV or TSV output when the input has one, never to JSON (regression: honoured on reading, not written)', async () => {
    const dir = await tempDir();
    const file = join(dir, 'semi.csv');
    await writeFile(file, 'sep=;\nName;Email;Company\nJane;jane@acme.com;Acme\n');
    const plain = join(dir, 'plain.csv');
    await writeFile(plain, 'Name;Email;Company\nJane;jane@acme.com;Acme\n');
    const outputOf = async (input: string, output: string) => {
      const source = await openInput(input);
      try {
        return (await resolveRun({ kind: 'contacts', output }, source)).output;
      } finally {
        await source.close();
      }
    };
    expect(await outputOf(file, '-')).toMatchObject({ delimiter: ';', sepLine: true });
    expect(await outputOf(file, join(dir, 'o.tsv'))).toMatchObject({ sepLine: true });
    expect(await outputOf(file, join(dir, 'o.jsonl'))).toMatchObject({ sepLine: false });
    expect(await outputOf(plain, '-')).toMatchObject({ delimiter: ';', sepLine: false });
  });

  it('warns of a delimiter or a BOM asked of a JSON or XLSX output, in the caller’s words, and writes neither (regression: silently ignored)', async () => {
    const { dir, file } = await splitFile();
    const source = await openInput(file);
    const asked = { outputDelimiter: ';', bom: true };
    const resolve = (output: string, more: object = {}) =>
      resolveRun({ kind: 'contacts', output, ...asked, ...more }, source);
    try {
      const json = await resolve(join(dir, 'o.json'));
      expect(json.source.warnings).toEqual([
        `outputDelimiter does nothing for JSON output (${join(dir, 'o.json')}): only a CSV or TSV output has a delimiter; ignored`,
        `bom does nothing for JSON output (${join(dir, 'o.json')}): only a CSV or TSV output starts with a BOM; ignored`,
      ]);
      expect(json.output).toMatchObject({ delimiter: undefined, bom: false });
      const xlsx = await resolve('-', { format: 'xlsx', words: CLI_WORDS });
      expect(xlsx.source.warnings).toEqual([
        '--output-delimiter does nothing for Excel output (stdout): only a CSV or TSV output has a delimiter; ignored',
        '--bom does nothing for Excel output (stdout): only a CSV or TSV output starts with a BOM; ignored',
      ]);
      // --no-bom is what a JSON Lines output gets anyway: nothing to say.
      const jsonl = await resolve('o.jsonl', { outputDelimiter: undefined, bom: false });
      expect(jsonl.source.warnings).toEqual([]);
      for (const output of ['o.csv', 'o.tsv']) {
        const table = await resolve(output);
        expect(table.source.warnings).toEqual([]);
        expect(table.output).toMatchObject({ delimiter: ';', bom: true });
      }
      expect(source.warnings).toEqual([]); // the input opened is left as it was
    } finally {
      await source.close();
    }
  });

  it('refuses -o (or rejects) naming the input file, also through a symlinked directory, before anything is sent', async () => {
    const { dir, file } = await splitFile();
    await symlink(dir, join(dir, 'via'));
    const source = await openInput(file);
    try {
      for (const output of [file, join(dir, 'via', 'split.csv')]) {
        await expect(resolveRun({ kind: 'contacts', output }, source)).rejects.toMatchObject({
          code: 'USAGE',
          message: expect.stringMatching(/it is the input file/),
        });
      }
      await expect(
        resolveRun({ kind: 'contacts', output: join(dir, 'out.csv'), rejects: file }, source),
      ).rejects.toMatchObject({ message: expect.stringMatching(/it is the input file/) });
      // Regression: --save-mapping on the input wrote the mapping over the user's rows.
      await expect(
        resolveRun(
          { kind: 'contacts', output: join(dir, 'out.csv'), mapping: { saveMapping: file } },
          source,
        ),
      ).rejects.toMatchObject({ message: expect.stringMatching(/it is the input file/) });
      expect(await readFile(file, 'utf8')).toBe(SPLIT);
    } finally {
      await source.close();
    }
  });

  it('refuses a column of the input that the output would repeat (regression: x_name with --prefix x_ was written twice)', async () => {
    const dir = await tempDir('enrich-resolve-');
    const file = join(dir, 'co.csv');
    await writeFile(file, 'company_domain,x_name,enrich_error\nacme.com,Mine,\n');
    const source = await openInput(file);
    const out = join(dir, 'out.csv');
    await expect(
      resolveRun({ kind: 'companies', output: out, prefix: 'x_', words: CLI_WORDS }, source),
    ).rejects.toMatchObject({
      code: 'USAGE',
      message:
        'the input has columns named "enrich_error", "x_name", which this run writes too: the output would have those names twice',
      hint: expect.stringContaining('--prefix enriched_'),
    });
    // The numbered columns of --top count too; one clash names its column.
    await writeFile(file, 'company_domain,enriched_name_2\nacme.com,Mine\n');
    const top = await openInput(file);
    await expect(
      resolveRun({ kind: 'companies', output: out, request: { top: 2 } }, top),
    ).rejects.toMatchObject({
      message: expect.stringContaining('a column named "enriched_name_2"'),
      location: { file, column: 'enriched_name_2' },
    });
    // One match, or JSON output (the input sits under "input"): no clash.
    await resolveRun({ kind: 'companies', output: out }, top);
    await resolveRun({ kind: 'companies', output: join(dir, 'o.json'), request: { top: 2 } }, top);
    await resolveRun({ kind: 'companies', output: out, request: { top: 2 }, explode: true }, top);
  });

  it('refuses two of the files it writes naming one file: one would be lost (regression: exit 0, the rejects gone)', async () => {
    const { dir, file } = await splitFile();
    const source = await openInput(file);
    const out = join(dir, 'same.csv');
    try {
      await expect(
        resolveRun({ kind: 'contacts', output: out, rejects: out }, source),
      ).rejects.toMatchObject({
        code: 'USAGE',
        message: `rejects ${out} is the file output writes too: one of them would be lost`,
      });
      await expect(
        resolveRun({ kind: 'contacts', output: out, mapping: { saveMapping: out } }, source),
      ).rejects.toMatchObject({
        message: expect.stringMatching(/^saveMapping .* is the file output writes too/),
      });
      await expect(
        resolveRun(
          {
            kind: 'contacts',
            output: '-',
            rejects: out,
            mapping: { saveMapping: `${dir}/./same.csv` },
          },
          source,
        ),
      ).rejects.toMatchObject({ message: expect.stringMatching(/is the file rejects writes too/) });
      // Files of their own: fine.
      await resolveRun(
        {
          kind: 'contacts',
          output: out,
          rejects: join(dir, 'r.csv'),
          mapping: { saveMapping: join(dir, 'm.json') },
        },
        source,
      );
    } finally {
      await source.close();
    }
  });
});
