import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { parse } from 'csv-parse/sync';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import { parseCsv, tempDir } from '../integration/bulk-harness.js';
import { filesContaining, recordFigure } from './figures.js';

const hostile = fileURLToPath(new URL('../../fixtures/hostile', import.meta.url));
const spectrum = dirname(createRequire(import.meta.url).resolve('csv-spectrum/package.json'));

/** The documented outcome of one hostile input. */
interface Case {
  file: string;
  /** parsed: every row kept; refused: exit 2 before anything is sent. */
  outcome: 'parsed' | 'refused';
  /** Rows by status when parsed (credits charged must equal `enriched`). */
  statuses?: { enriched?: number; invalid?: number; failed?: number };
  /** What stderr says (refused) or what the invalid rows' reasons say (parsed). */
  says?: RegExp;
  /** Extra CLI arguments. */
  args?: string[];
  /** Checks of the written JSON Lines output. */
  check?: (rows: OutputLine[]) => void;
}

interface OutputLine {
  row: number;
  input: Record<string, unknown>;
  status: string;
  error: string | null;
}

const refused = (file: string, says: RegExp): Case => ({ file, outcome: 'refused', says });
const parsed = (file: string, statuses: Case['statuses'], more: Partial<Case> = {}): Case => ({
  file,
  outcome: 'parsed',
  statuses,
  ...more,
});

const NEEDS = /needs at least one of/;
const CASES: Case[] = [
  refused('unclosed-quote.csv', /a quoted field is never closed.*line 3/),
  parsed(
    'quote-inside-unquoted.csv',
    { enriched: 1 },
    {
      check: (r) => expect(r[0]?.input.first_name).toBe('Ja"ne'),
    },
  ),
  parsed(
    'garbage-after-quote.csv',
    { enriched: 1 },
    {
      check: (r) => expect(r[0]?.input.email).toBe('"jane@acme.com"x'),
    },
  ),
  parsed('ragged-short.csv', { enriched: 1, invalid: 1 }, { says: /expected 4 cells, got 2/ }),
  parsed(
    'ragged-long.csv',
    { enriched: 1, invalid: 1 },
    {
      says: /expected 4 cells, got 6 \(extra: "surprise", "more"\)/,
    },
  ),
  refused(
    'nul-bytes.csv',
    /is not a text file: it looks like binary data \(it contains NUL bytes\)/,
  ),
  refused('nul-everywhere.csv', /is not a text file.*NUL bytes/),
  parsed(
    'invalid-utf8.csv',
    { enriched: 2 },
    {
      check: (r) => expect(r[0]?.input.first_name).toBe('José'), // read as Windows-1252
    },
  ),
  parsed('invalid-utf8-sequence.csv', { enriched: 1 }),
  parsed(
    'utf16le-no-bom.csv',
    { enriched: 1 },
    {
      check: (r) => expect(r[0]?.input.email).toBe('jane@acme.com'),
    },
  ),
  parsed(
    'utf16be-no-bom.csv',
    { enriched: 1 },
    {
      check: (r) => expect(r[0]?.input.email).toBe('jane@acme.com'),
    },
  ),
  refused(
    'empty.csv',
    /has no header row \(a line naming the columns\): the file is empty \(0 bytes\)/,
  ),
  refused('bom-only.csv', /has no header row/),
  refused('newlines-only.csv', /has no header row/),
  // Spaces and tabs name no column: no header (never a column called "  ").
  refused(
    'whitespace-only.csv',
    /has no header row \(a line naming the columns\): the file holds only blank lines/,
  ),
  parsed('header-only.csv', {}),
  parsed('header-only-no-newline.csv', {}),
  parsed(
    'empty-header-names.csv',
    { enriched: 1 },
    {
      check: (r) =>
        expect(Object.keys(r[0]?.input ?? {})).toEqual([
          '(column 1)',
          '(column 2)',
          '(column 3)',
          '(column 4)',
        ]),
    },
  ),
  refused(
    'duplicate-email-headers.csv',
    /cannot tell which column holds business_email: "email", "email \(2\)"/,
  ),
  refused('png-image.csv', /is not a text file/),
  refused('gzip.csv', /cannot read .*gzip.csv: it is not a whole gzip file/),
  refused('pdf.csv', /is not a text file: it looks like a PDF document/),
  refused('random-bytes.csv', /is not a text file/),
  refused('elf-binary.csv', /is not a text file/),
  refused('xml.csv', /no row can be sent with this mapping/),
  refused('html.csv', /no row can be sent with this mapping/),
  refused('json-object.json', /expected a JSON array of objects/),
  refused(
    'json-array-of-numbers.json',
    /expected an object \("\{"\) as element 1 of the array, got "1"/,
  ),
  refused('json-array-of-strings.json', /expected an object \("\{"\) as element 1/),
  refused('json-mixed-array.json', /expected an object \("\{"\) as element 2/),
  refused('json-null.json', /expected a JSON array of objects/),
  refused('json-string.json', /expected a JSON array of objects/),
  refused(
    'json-truncated.json',
    /expected the array to be closed with "\]", got the end of the file/,
  ),
  refused('json-trailing-garbage.json', /expected nothing after the closing "\]"/),
  refused('json-deep-nesting.json', /expected at most 1000 levels of nesting, got 100001/),
  parsed(
    'json-nested-values.json',
    { enriched: 1 },
    {
      check: (r) =>
        expect(r[0]?.input).toEqual({
          email: 'jane@acme.com',
          first_name: { given: 'Jane' },
          tags: [1, 2],
          n: null,
          ok: true,
          age: 41,
        }),
    },
  ),
  parsed(
    'json-proto-keys.json',
    { enriched: 1 },
    {
      check: (r) => {
        const input = r[0]?.input ?? {};
        expect(Object.keys(input)).toEqual(['email', '__proto__', 'constructor']);
        // Written back as plain data (the CLI ran in another process: its prototypes are
        // checked by what it wrote, not by this process's).
        expect(Object.getOwnPropertyDescriptor(input, '__proto__')?.value).toEqual({
          polluted: 'yes',
        });
        expect(Object.keys(r[0] ?? {})).not.toContain('polluted');
      },
    },
  ),
  refused('jsonl-bad-line.jsonl', /line 2 is not valid JSON.*line 2\)/),
  refused('jsonl-not-object-line.jsonl', /line 2: expected a JSON object \(\{\.\.\.\}\), got 42/),
  parsed('jsonl-blank-lines.jsonl', { enriched: 2 }),
  parsed(
    'values-256-chars.csv',
    { enriched: 2, invalid: 2 },
    {
      says: /(first_name|company_name): longer than 255 characters \(got 256\)/,
    },
  ),
  parsed(
    'email-with-spaces.csv',
    // `jane@acme .com` with Jane Doe at Acme is sent without the email (the email rule).
    { enriched: 4, invalid: 2 },
    {
      says: /business_email: not an email address \(it contains (a space|more than one @)\)/,
    },
  ),
  parsed('formulas-in-input.csv', { enriched: 2 }, { args: ['--format', 'csv'] }),
  parsed('formula-header.csv', { enriched: 1 }),
  parsed(
    'proto-header.csv',
    { enriched: 1 },
    {
      check: (r) =>
        expect(Object.keys(r[0]?.input ?? {})).toEqual([
          '__proto__',
          'constructor',
          'email',
          'prototype',
        ]),
    },
  ),
  parsed(
    'control-chars.csv',
    { enriched: 1 },
    {
      check: (r) => expect(r[0]?.input.first_name).toBe('Ja\u001bne\u0007'),
    },
  ),
  parsed(
    'bidi-and-emoji.csv',
    { enriched: 1 },
    {
      check: (r) => expect(r[0]?.input.company).toBe('\u{1F600} Acme'),
    },
  ),
  parsed(
    'cr-inside-quotes.csv',
    { enriched: 1 },
    {
      check: (r) =>
        expect([r[0]?.input.first_name, r[0]?.input.last_name]).toEqual(['Ja\rne', 'Do\ne']),
    },
  ),
  parsed('all-empty-cells.csv', { invalid: 2 }, { says: NEEDS }),
  parsed(
    'semicolon-with-commas.csv',
    { enriched: 1 },
    {
      check: (r) => expect(r[0]?.input.company).toBe('Acme, Inc.'),
    },
  ),
];

let sb: SandboxHandle;
let work: string;
const table: Record<string, unknown>[] = [];
let runs = 0;
const written: string[] = [];
beforeAll(async () => {
  await ensureBuilt();
  sb = await startSandbox({ port: 0 });
  work = await tempDir('enrich-hostile-');
}, 120_000);
afterAll(async () => {
  recordFigure('hostile', { cases: table });
  // Whatever the input, the key is in no journal, spool, output or rejects file.
  expect(filesContaining(written, sb.apiKey)).toEqual([]);
  await sb.close();
});

/** Runs `enrich contacts <file> -o out --json` and checks what every hostile input must satisfy. */
async function runCase(file: string, args: string[] = [], format = 'jsonl', kind = 'contacts') {
  const dir = join(work, String(runs++));
  await mkdir(dir);
  const out = join(dir, `out.${format}`);
  const env: Record<string, string> = {
    ...(await tempEnv()),
    ENRICH_BASE_URL: sb.url,
    ENRICH_API_KEY: sb.apiKey,
  };
  written.push(env.ENRICH_STATE_DIR as string, env.ENRICH_CONFIG_DIR as string, dir);
  const before = sb.admin.stats();
  const r = await runCli([kind, file, '-o', out, '--json', '--no-progress', ...args], {
    env,
  });
  const after = sb.admin.stats();
  const charged = after.credits_charged - before.credits_charged;
  const sent = after.records_submitted - before.records_submitted;
  // No stack trace reaches the user, and no input is a bug (exit 1).
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toMatch(/INTERNAL|internal error/);
  expect(r.code).not.toBe(1);
  return { r, out, charged, sent, env };
}

describe('hostile inputs (acceptance)', () => {
  it('has at least 40 hostile files, each with its documented outcome', () => {
    const files = readdirSync(hostile).filter((f) => !f.startsWith('.'));
    expect(files.length).toBeGreaterThanOrEqual(40);
    expect(CASES.map((c) => c.file).sort()).toEqual(files.sort());
  });

  for (const c of CASES) {
    it(`${c.file}: ${c.outcome}`, async () => {
      const format = c.args?.includes('csv') ? 'csv' : 'jsonl';
      const { r, out, charged, sent } = await runCase(join(hostile, c.file), c.args, format);
      if (c.outcome === 'refused') {
        expect(r.code).toBe(2);
        expect(r.stderr).toMatch(c.says as RegExp);
        // Unreadable input names the file; a mapping problem names the columns instead.
        if (/\[INPUT_/.test(r.stderr)) expect(r.stderr).toContain(c.file);
        expect(existsSync(out)).toBe(false);
        expect(sent).toBe(0);
        table.push({ file: c.file, outcome: 'refused (exit 2)', says: firstLine(r.stderr) });
        return;
      }
      expect(r.code).toBe(0);
      const summary = JSON.parse(r.stdout) as { rows: number; statuses: Record<string, number> };
      const want = { enriched: 0, invalid: 0, failed: 0, ...c.statuses };
      expect(summary.statuses).toMatchObject(want);
      // Zero credits on anything invalid: exactly the enriched rows were paid for.
      expect(charged).toBe(want.enriched);
      expect(sent).toBe(want.enriched + want.failed);
      const text = await readFile(out, 'utf8');
      if (format === 'jsonl') {
        const rows = text
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as OutputLine);
        expect(rows).toHaveLength(summary.rows);
        for (const row of rows.filter((x) => x.status === 'invalid'))
          expect(row.error).toMatch(c.says ?? /./);
        c.check?.(rows);
      } else {
        // Input cells go back exactly as read: formulas in the input are not altered.
        const input = parse(readFileSync(join(hostile, c.file), 'utf8'), {
          relax_quotes: true,
        }) as string[][];
        const output = parseCsv(text);
        expect(output.map((row) => row.slice(0, input[0]?.length))).toEqual(input);
      }
      table.push({ file: c.file, outcome: 'parsed', statuses: summary.statuses, credits: charged });
    });
  }

  it('a 10 MB field is refused (a row is at most 8 MiB), nothing sent', async () => {
    const file = join(work, 'field-10mb.csv');
    const big = 'x'.repeat(10 * 1024 * 1024);
    await writeFile(
      file,
      `email,first_name,last_name,company\r\njane@acme.com,Jane,Doe,Acme\r\nbob@acme.com,"${big}",Roe,Acme\r\n`,
    );
    const { r, sent } = await runCase(file);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /a row is longer than 8388608 characters: expected at most 8388608 characters per row.*line 3/,
    );
    expect(sent).toBe(0);
    table.push({
      file: 'field-10mb.csv (generated)',
      outcome: 'refused (exit 2)',
      says: firstLine(r.stderr),
    });
  });

  it('10,000 columns are parsed and written back', async () => {
    const file = join(work, 'columns-10000.csv');
    const cols = ['email', ...Array.from({ length: 9999 }, (_, i) => `c${i}`)];
    const cells = ['jane@acme.com', ...Array.from({ length: 9999 }, (_, i) => String(i))];
    await writeFile(file, `${cols.join(',')}\r\n${cells.join(',')}\r\n`);
    const { r, out, charged } = await runCase(file, ['--format', 'csv'], 'csv');
    expect(r.code).toBe(0);
    expect(charged).toBe(1);
    const [head, row] = (await readFile(out, 'utf8')).split('\n');
    expect(head?.startsWith(cols.join(','))).toBe(true);
    expect(row?.startsWith(`${cells.join(',')},enriched,`)).toBe(true);
    table.push({
      file: 'columns-10000.csv (generated)',
      outcome: 'parsed',
      statuses: { enriched: 1 },
      credits: charged,
    });
  });

  const spectrumCases = readdirSync(join(spectrum, 'csvs')).filter((f) => f.endsWith('.csv'));
  it('has the csv-spectrum cases', () => expect(spectrumCases.length).toBeGreaterThanOrEqual(12));
  for (const name of spectrumCases) {
    it(`csv-spectrum ${name}: parsed as the spectrum says, rows sent as they are`, async () => {
      const json = JSON.parse(
        readFileSync(join(spectrum, 'json', name.replace(/\.csv$/, '.json')), 'utf8'),
      ) as Record<string, string>[] | Record<string, string>;
      const expected = Array.isArray(json) ? json : [json];
      // Any non-empty text is a company name: as companies, every row can be sent.
      const first = Object.keys(expected[0] as object)[0] as string;
      const { r, out, sent, charged } = await runCase(
        join(spectrum, 'csvs', name),
        ['--map', `company_name=${first}`],
        'jsonl',
        'companies',
      );
      expect(r.code).toBe(0);
      const summary = JSON.parse(r.stdout) as { statuses: Record<string, number> };
      const rows = (await readFile(out, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as OutputLine);
      expect(rows).toHaveLength(expected.length);
      expect(sent).toBe(expected.length);
      expect(charged).toBe(summary.statuses.enriched);
      if (name === 'location_coordinates.csv') {
        // The spectrum's JSON disagrees with its own CSV on the phone number only.
        const { ['Contact Phone Number']: phone, ...rest } = rows[0]?.input ?? {};
        expect(phone).toBe('2095257564');
        const { ['Contact Phone Number']: _, ...want } = expected[0] ?? {};
        expect(rest).toEqual(want);
      } else expect(rows.map((x) => x.input)).toEqual(expected);
      table.push({
        file: `csv-spectrum/${name}`,
        outcome: 'parsed',
        statuses: summary.statuses,
        credits: charged,
      });
    });
  }
});

function firstLine(s: string): string {
  return s.split('\n')[0]?.replace(/ \(\/[^)]*\)/, '') ?? '';
}
