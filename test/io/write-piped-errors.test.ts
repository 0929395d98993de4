import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createOutputWriter, type OutputRow } from '../../src/io/write.js';
import { writeUntilFailure } from '../helpers/write-until-failure.js';

// Outputs written through a second stream (gzip, or exceljs's zip for .xlsx) piped into the
// file: a failure of the file must reach the caller. A pipe stops at its destination's
// error, so the compressor then waited for ever for a reader: the run hung at its first
// write past the compressor's buffer, or at close, with the .tmp left behind.

// Incompressible cells: the compressed output is as large as the text.
const row = (i: number): OutputRow => ({
  row: i + 1,
  input: { index: i, line: i + 2, cells: [randomBytes(600).toString('base64'), `r${i}`] },
  status: 'enriched',
  error: '',
  creditCharged: true,
  values: [],
});

const open = (target: string, format: 'csv' | 'xlsx', gzip: boolean, stdout?: Writable) =>
  createOutputWriter({
    target,
    format,
    gzip,
    inputHeader: ['Blob', 'Id'],
    jsonKeys: ['Blob', 'Id'],
    extraColumns: [],
    ...(stdout ? { stdout } : {}),
  });

describe('a compressed output whose file fails', () => {
  it.each([
    ['a .csv.gz of 10 rows (the failure comes at close)', 'csv', true, 10],
    ['a .csv.gz of 3,000 rows (the failure comes mid-write)', 'csv', true, 3000],
    ['an .xlsx of 10 rows', 'xlsx', false, 10],
    ['an .xlsx of 3,000 rows', 'xlsx', false, 3000],
  ] as const)(
    '%s on a full device fails with FILE_SYSTEM "disk full" instead of hanging',
    async (_name, format, gzip, n) => {
      const err = await writeUntilFailure(await open('/dev/full', format, gzip), n, row);
      expect(err).toMatchObject({
        code: 'FILE_SYSTEM',
        message: 'cannot write /dev/full: the disk is full (no space left on the device)',
      });
    },
    15_000,
  );

  it('gzip to stdout that fails (EPIPE) fails with OUTPUT_CLOSED instead of hanging', async () => {
    const failing = new Writable({
      write(_chunk, _enc, done) {
        done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const err = await writeUntilFailure(await open('-', 'csv', true, failing), 3000, row);
    expect(err).toMatchObject({ code: 'OUTPUT_CLOSED' });
  }, 15_000);
});
