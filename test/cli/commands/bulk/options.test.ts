import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { EnrichError } from '../../../../src/errors.js';
import { requestMetadata } from '../../../../src/bulk/request-metadata.js';
import { outputFormatOf } from '../../../../src/bulk/resolve-run.js';
import {
  addBulkOptions,
  normalizeBulkOptions,
  parseDelimiter,
  requestOptionsOf,
} from '../../../../src/cli/commands/bulk/options.js';
import { CLI_WORDS } from '../../../../src/cli/commands/bulk/resolve.js';
import type { BulkKind } from '../../../../src/pipeline/types.js';

/** Parses flags the way the real command does, then normalises them. */
function parse(kind: BulkKind, argv: string[]) {
  const cmd = addBulkOptions(new Command(kind).argument('<input>').exitOverride(), kind);
  cmd.parse(['in.csv', ...argv], { from: 'user' });
  return normalizeBulkOptions(kind, cmd.opts());
}

function usage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(EnrichError);
    expect((err as EnrichError).exitCode).toBe(2);
    return (err as EnrichError).message;
  }
  throw new Error('expected a usage error');
}

describe('normalizeBulkOptions', () => {
  it('defaults', () => {
    const o = parse('contacts', []);
    expect(o).toMatchObject({
      kind: 'contacts',
      dedupe: true,
      wait: true,
      dryRun: false,
      bom: undefined,
      top: 1,
      map: {},
    });
    expect(o.output).toBeUndefined();
    // Left to the settings (config file, env, defaults) unless given as flags.
    for (const k of ['batchSize', 'concurrency', 'prefix', 'formulaEscape', 'timeoutMs'] as const) {
      expect(o[k]).toBeUndefined();
    }
    expect(Object.isFrozen(o)).toBe(true);
  });

  it('every flag, normalised', () => {
    const o = parse('contacts', [
      '-o',
      'out.jsonl',
      '--map',
      'business_email=Work Email',
      '--map',
      'company_name=',
      '--mapping',
      'm.json',
      '--save-mapping',
      's.json',
      '--id-column',
      'Id',
      '--batch-size',
      '250',
      '--concurrency',
      '2',
      '--dry-run',
      '--max-credits',
      '0',
      '--no-dedupe',
      '--no-wait',
      '--timeout',
      '90m',
      '--restart',
      '--resend-unconfirmed',
      '--rate-limit',
      '5',
      '--mobile',
      '--require-mobile',
      '--require-email',
      '--verify',
      '--prefix',
      'x_',
      '--rejects',
      'r.csv',
      '--formula-escape',
      'NEVER',
      '--bom',
      '--delimiter',
      'tab',
      '--encoding',
      'cp1252',
      '--header-row',
      '3',
      '--input-format',
      'tsv',
    ]);
    expect(o).toEqual({
      kind: 'contacts',
      output: 'out.jsonl',
      // Only --format sets it: the output's extension is read where the run is resolved.
      format: undefined,
      map: { business_email: 'Work Email', company_name: '' },
      mappingFile: 'm.json',
      saveMapping: 's.json',
      idColumn: 'Id',
      batchSize: 250,
      concurrency: 2,
      dryRun: true,
      maxCredits: 0,
      dedupe: false,
      wait: false,
      timeoutMs: 90 * 60_000,
      restart: true,
      resendUnconfirmed: true,
      cache: true,
      refresh: false,
      maxAgeMs: undefined,
      rateLimit: 5,
      mobile: true,
      requireMobile: true,
      requireEmail: true,
      verify: true,
      top: 1,
      explode: false,
      prefix: 'x_',
      rejects: 'r.csv',
      formulaEscape: 'never',
      bom: true,
      delimiter: '\t',
      encoding: 'cp1252',
      headerRow: 3,
      inputFormat: 'tsv',
    });
    // The flags become the request metadata the way the library builds it.
    expect(requestMetadata(o.kind, requestOptionsOf(o))).toEqual({
      business_email_exists: true,
      real_time_verification: true,
      mobile_phone_enrichment: true,
      mobile_phone_exists: true,
    });
  });

  it('companies: --top and --explode', () => {
    const o = parse('companies', ['--top', '3', '--explode', '--format', 'tsv']);
    expect([o.top, o.explode, o.format]).toEqual([3, true, 'tsv']);
    expect(requestMetadata(o.kind, requestOptionsOf(o))).toEqual({ top_matches_returned: 3 });
  });

  it('output format: --format, else the extension, else the input format', () => {
    const format = (argv: string[], input: 'csv' | 'json' | 'jsonl') => {
      const o = parse('contacts', argv);
      return outputFormatOf(o.format, o.output ?? '-', input);
    };
    expect(format(['-o', 'x.TSV'], 'csv')).toBe('tsv');
    expect(format(['-o', 'x.TSV', '--format', 'json'], 'csv')).toBe('json');
    expect(format(['-o', 'x.out'], 'json')).toBe('json');
    expect(format(['-o', '-'], 'jsonl')).toBe('jsonl');
    expect(format(['-o', 'x.csv.gz'], 'json')).toBe('csv');
    expect(format(['-o', 'x.xlsx'], 'csv')).toBe('xlsx');
    expect(format(['--format', 'xlsx'], 'csv')).toBe('xlsx');
    expect(outputFormatOf(undefined, '-', 'xlsx')).toBe('csv');
    // Refused before anything is sent; --format says what to write whatever the name.
    for (const name of ['x.parquet', 'x.xls', 'x.xlsx.gz'])
      expect(() => format(['-o', name], 'csv')).toThrow(/is not a format enrich writes/);
    expect(format(['-o', 'x.parquet', '--format', 'csv'], 'csv')).toBe('csv');
    // The hint fits the name: a workbook is compressed already (regression: it said add .gz).
    const hint = (name: string) => {
      try {
        outputFormatOf(undefined, name, 'csv');
      } catch (err) {
        return (err as EnrichError).hint;
      }
      return undefined;
    };
    expect(hint('x.xlsx.gz')).toBe(
      'A workbook is compressed already: name the output .xlsx, or .csv.gz for a compressed table.',
    );
    expect(hint('x.parquet')).toMatch(/^Name the output .csv, .tsv/);
  });

  it('--bom, --no-bom, --output-delimiter, --fields, --sheet', () => {
    expect(parse('contacts', []).bom).toBeUndefined();
    expect(parse('contacts', ['--bom']).bom).toBe(true);
    expect(parse('contacts', ['--no-bom']).bom).toBe(false);
    const o = parse('contacts', [
      '--output-delimiter',
      'semicolon',
      '--fields',
      'email,mobile_phone',
      '--sheet',
      'Leads',
    ]);
    expect([o.outputDelimiter, o.fields, o.sheet]).toEqual([
      ';',
      ['email', 'mobile_phone'],
      'Leads',
    ]);
  });

  it.each([
    [['--batch-size', '0'], /--batch-size: expected an integer from 1 to 10000, got "0"/],
    [['--batch-size', '1.5'], /--batch-size/],
    [['--concurrency', 'many'], /--concurrency/],
    [['--max-credits', '-1'], /--max-credits: expected an integer >= 0/],
    [['--formula-escape', 'maybe'], /expected one of auto, always, never/],
    [['--format', 'xls'], /--format: expected one of csv, tsv, json, jsonl, xlsx/],
    [['--output-delimiter', ';;'], /--output-delimiter: expected one character/],
    [['--timeout', 'soon'], /duration/],
    // A bare number would be milliseconds: `--max-age 30` meant as 30 days would send (and pay
    // for) every row again, `--timeout 90` would give up at once.
    [
      ['--max-age', '30'],
      /--max-age: expected a duration with its unit, such as 30d, 30h, 30m or 30s, got "30"/,
    ],
    [['--timeout', '90'], /--timeout: expected a duration with its unit/],
    [['--header-row', '0'], /--header-row/],
    [['--delimiter', ';;'], /--delimiter: expected one character/],
    [['--map', 'Email'], /--map: expected field=Column/],
  ])('contacts %j is a usage error', (argv, message) => {
    expect(usage(() => parse('contacts', argv))).toMatch(message);
  });

  // Each command's example is one of its own fields: companies were shown business_email.
  it.each([
    [
      'contacts',
      /^--map: expected field=Column \(e\.g\. business_email="Work Email"\), got "=Email"$/,
    ],
    [
      'companies',
      /^--map: expected field=Column \(e\.g\. company_name="Account Name"\), got "=Email"$/,
    ],
  ] as const)('%s --map =Email (no field) names a field of its own', (kind, message) => {
    expect(usage(() => parse(kind, ['--map', '=Email']))).toMatch(message);
  });

  it('--require-mobile without --mobile is refused where the request is built, in CLI words', () => {
    const o = parse('contacts', ['--require-mobile']);
    expect(usage(() => requestMetadata('contacts', requestOptionsOf(o), CLI_WORDS))).toMatch(
      /^--require-mobile needs --mobile: the service filters on mobile phones/,
    );
    expect(usage(() => requestMetadata('contacts', requestOptionsOf(o)))).toMatch(
      /^requireMobile needs mobile/,
    );
  });

  it('--top is 1..10', () => {
    expect(usage(() => parse('companies', ['--top', '11']))).toMatch(
      /--top: expected an integer from 1 to 10/,
    );
  });

  it('contacts do not take company-only flags, and vice versa (commander refuses them)', () => {
    expect(() => parse('contacts', ['--explode'])).toThrow(/unknown option/);
    expect(() => parse('companies', ['--mobile'])).toThrow(/unknown option/);
  });

  it('parseDelimiter names', () => {
    expect([',', 'comma', 'semicolon', 'pipe', '\\t', 'TAB'].map((d) => parseDelimiter(d))).toEqual(
      [',', ',', ';', '|', '\t', '\t'],
    );
  });
});
