import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';

beforeAll(ensureBuilt, 120_000);

/** A German Excel export: BOM, `sep=;`, semicolons, CRLF, an accent, one row that is invalid. */
const EXPORT =
  '\ufeffsep=;\r\n' +
  'E-Mail-Adresse;Vorname;Nachname;Firma\r\n' +
  'jane.doe@acme.com;Jane;Doe;"Acme; Inc"\r\n' +
  'kein-email;Jürgen;;\r\n';

describe('--rejects of a semicolon export (regression: written with commas, no BOM, no sep= line)', () => {
  it.each([
    ['a run', ['--sandbox', '-o', 'out.csv']],
    ['a dry run', ['--dry-run', '-q']],
  ])('%s writes the rejects as the output is written: BOM, sep=;, semicolons', async (_, args) => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-rejects-'));
    const input = join(dir, 'export.csv');
    await writeFile(input, EXPORT);
    const rejects = join(dir, 'rejects.csv');
    const r = await runCli(
      [
        'contacts',
        input,
        ...args.map((a) => (a === 'out.csv' ? join(dir, a) : a)),
        '--rejects',
        rejects,
      ],
      { env: await tempEnv() },
    );
    expect(r.code, r.stderr).toBe(0);
    const text = await readFile(rejects, 'utf8');
    expect(text.split('\n').slice(0, 3)).toEqual([
      '\ufeffsep=;',
      'E-Mail-Adresse;Vorname;Nachname;Firma;enrich_status;enrich_error;enrich_credit_charged;enrich_cached_at;enrich_line',
      'kein-email;Jürgen;;;invalid;"business_email: not an email address (it has no @) (column ""E-Mail-Adresse"")";;;4',
    ]);
    if (args.includes('out.csv')) {
      const out = await readFile(join(dir, 'out.csv'), 'utf8');
      expect(out.startsWith('\ufeffsep=;\nE-Mail-Adresse;Vorname;')).toBe(true);
    }
  });

  it('a JSON rejects file stays JSON, and --no-bom and --output-delimiter are honoured', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-rejects-'));
    const input = join(dir, 'export.csv');
    await writeFile(input, EXPORT);
    const env = await tempEnv();
    const json = join(dir, 'rejects.json');
    expect(
      (await runCli(['contacts', input, '--dry-run', '-q', '--rejects', json], { env })).code,
    ).toBe(0);
    expect(JSON.parse(await readFile(json, 'utf8'))).toMatchObject([
      { line: 4, status: 'invalid' },
    ]);
    const csv = join(dir, 'rejects.csv');
    const r = await runCli(
      [
        'contacts',
        input,
        '--dry-run',
        '-q',
        '--no-bom',
        '--output-delimiter',
        '|',
        '--rejects',
        csv,
      ],
      { env },
    );
    expect(r.code, r.stderr).toBe(0);
    expect((await readFile(csv, 'utf8')).split('\n')[0]).toBe('sep=|');
  });
});
