import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import {
  appendFile,
  mkdir,
  mkdtemp,
  readFile,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileIdOf, sameFile } from '../../src/io/input-pin.js';
import { openInput, type InputSource } from '../../src/io/read.js';
import { readJsonArray, readJsonLines } from '../../src/io/read-json.js';
import { checkOutputTarget, createOutputWriter, refuseInputAsOutput } from '../../src/io/write.js';
import { allRows } from './read-helpers.js';

let dir: string;
const sources: InputSource[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'enrich-input-safety-'));
});
afterEach(async () => {
  for (const s of sources.splice(0)) await s.close();
  await rm(dir, { recursive: true, force: true });
});

const csv = (n: number) =>
  'Email,Company\n' +
  Array.from({ length: n }, (_, i) => `r${i}@acme.com,Acme ${i}`).join('\n') +
  '\n';

async function open(path: string, options = {}): Promise<InputSource> {
  const s = await openInput(path, options);
  sources.push(s);
  return s;
}

describe('the input is pinned (regression: a file changed between passes mixed rows up, exit 0)', () => {
  it('a second pass over an unchanged file reads the same rows', async () => {
    await writeFile(join(dir, 'in.csv'), csv(100));
    const s = await open(join(dir, 'in.csv'));
    expect(await allRows(s)).toHaveLength(100);
    expect(await allRows(s)).toHaveLength(100);
    expect(await allRows(s)).toHaveLength(100);
  });

  it('a file replaced between passes (a row inserted, renamed over it): INPUT_CHANGED naming the file', async () => {
    const file = join(dir, 'in.csv');
    await writeFile(file, csv(100));
    const s = await open(file);
    await allRows(s);
    const text = csv(100).replace('r5@acme.com', 'inserted@acme.com,New\nr5@acme.com');
    await writeFile(join(dir, 'next.csv'), text);
    await rename(join(dir, 'next.csv'), file);
    await expect(allRows(s)).rejects.toMatchObject({
      code: 'INPUT_CHANGED',
      exitCode: 2,
      message: `${file} changed during the run (it was replaced by another file): its rows would no longer match the rows already sent, so the run stops`,
      hint: expect.stringContaining('Run the same command again') as string,
    });
  });

  it('a file appended to between passes, or during one: INPUT_CHANGED', async () => {
    const file = join(dir, 'in.jsonl');
    await writeFile(file, '{"email":"a@x.com"}\n{"email":"b@x.com"}\n');
    const s = await open(file);
    await allRows(s);
    await appendFile(file, '{"email":"c@x.com"}\n');
    await expect(allRows(s)).rejects.toMatchObject({
      code: 'INPUT_CHANGED',
      message: expect.stringContaining('its size went from 40 to 60 bytes') as string,
    });
    const big = join(dir, 'big.csv');
    await writeFile(big, csv(50_000));
    const t = await open(big);
    let n = 0;
    const reading = (async () => {
      for await (const _ of t.rows()) if (n++ === 10) await appendFile(big, 'late@x.com,Late\n');
    })();
    await expect(reading).rejects.toMatchObject({ code: 'INPUT_CHANGED' });
  });

  it('the same bytes rewritten in place (same size) are caught by the first bytes or the mtime', async () => {
    const file = join(dir, 'in.csv');
    await writeFile(file, csv(10));
    const s = await open(file);
    await allRows(s);
    await writeFile(file, csv(10).replace('r0@', 'x0@'));
    await expect(allRows(s)).rejects.toMatchObject({ code: 'INPUT_CHANGED' });
  });
});

describe('identity from the real path (regression: the same file through a symlinked directory was another run)', () => {
  it('a file through a symlinked directory has the same identity and id; sameFile compares ids', async () => {
    await mkdir(join(dir, 'data'));
    await writeFile(join(dir, 'data', 'in.csv'), csv(3));
    await symlink(join(dir, 'data'), join(dir, 'alias'));
    const a = await open(join(dir, 'data', 'in.csv'));
    const b = await open(join(dir, 'alias', 'in.csv'));
    expect(await b.identity()).toEqual(await a.identity());
    expect((await a.identity()).path).toBe(join(dir, 'data', 'in.csv'));
    expect(a.file).toBeDefined();
    expect(sameFile(a.file!, b.file!)).toBe(true);
    const out = await fileIdOf(join(dir, 'alias', 'in.csv'));
    expect(out && sameFile(a.file!, out)).toBe(true);
    await writeFile(join(dir, 'other.csv'), csv(3));
    expect(sameFile(a.file!, (await fileIdOf(join(dir, 'other.csv')))!)).toBe(false);
    expect(await fileIdOf(join(dir, 'missing.csv'))).toBeUndefined();
  });

  it('sameFile: same device and inode, or the same real path', () => {
    const id = { realPath: '/a/in.csv', dev: 1, ino: 7 };
    expect(sameFile(id, { realPath: '/b/hardlink.csv', dev: 1, ino: 7 })).toBe(true);
    expect(sameFile(id, { realPath: '/a/in.csv', dev: 1, ino: 9 })).toBe(true);
    expect(sameFile(id, { realPath: '/a/other.csv', dev: 2, ino: 7 })).toBe(false);
  });
});

describe('inputs: NUL anywhere, capped JSON records, exact JSON numbers, FIFOs', () => {
  it('a NUL byte at row 25,000 refuses the file (regression: only the first 64 KiB were checked)', async () => {
    const rows = Array.from({ length: 30_000 }, (_, i) =>
      i === 25_000 ? `r${i}@acme.com,Ac\0me` : `r${i}@acme.com,Acme`,
    );
    await writeFile(join(dir, 'nul.csv'), `Email,Company\n${rows.join('\n')}\n`);
    const s = await open(join(dir, 'nul.csv'));
    await expect(allRows(s)).rejects.toMatchObject({
      code: 'INPUT_UNREADABLE',
      message: expect.stringMatching(
        /nul\.csv is not a text file: it contains a NUL byte/,
      ) as string,
    });
    await expect(allRows(s)).rejects.toMatchObject({ code: 'INPUT_UNREADABLE' });
    const lines = Array.from(
      { length: 30_000 },
      (_, i) => `{"e":"r${i}${i === 25_000 ? '\0' : ''}"}`,
    );
    await writeFile(join(dir, 'nul.jsonl'), lines.join('\n'));
    await expect(open(join(dir, 'nul.jsonl'))).rejects.toMatchObject({ code: 'INPUT_UNREADABLE' });
  });

  it('a JSON value over the limit is refused with its record, read through a FIFO so nothing holds it whole', async () => {
    const value = 'x'.repeat(20 * 1024 * 1024);
    for (const [name, text, read, where] of [
      [
        'big.jsonl',
        `{"e":"a@x.com"}\n{"e":"b@x.com","notes":"${value}"}\n`,
        readJsonLines,
        'line 2',
      ],
      [
        'big.json',
        `[{"e":"a@x.com"},\n{"e":"b@x.com","notes":"${value}"}]`,
        readJsonArray,
        'element 2',
      ],
    ] as const) {
      const fifo = join(dir, name);
      execFileSync('mkfifo', [fifo]);
      let written = 0;
      const writer = createWriteStream(fifo);
      writer.on('error', () => undefined); // EPIPE once the reader stops
      const feeding = (async () => {
        for (let at = 0; at < text.length && !writer.destroyed; at += 65_536) {
          const chunk = text.slice(at, at + 65_536);
          written += chunk.length;
          if (!writer.write(chunk))
            await new Promise<void>((ok) =>
              writer.once('drain', () => ok()).once('close', () => ok()),
            );
        }
        writer.end();
      })();
      const opts = { name, encoding: 'utf-8', bomLength: 0, maxRecordChars: 1024 * 1024 };
      const reading = (async () => {
        for await (const _ of read(fifo, opts)) void _;
      })();
      await expect(reading).rejects.toMatchObject({
        code: 'INPUT_INVALID',
        message: expect.stringContaining(`${where}`) as string,
      });
      writer.destroy();
      await feeding;
      expect(written).toBeLessThan(4 * 1024 * 1024);
    }
  });

  it('the default limit is 8 MiB, as for CSV rows', async () => {
    const file = join(dir, 'nine.jsonl');
    await writeFile(file, `{"notes":"${'y'.repeat(9 * 1024 * 1024)}"}\n`);
    await expect(open(file)).rejects.toMatchObject({
      code: 'INPUT_INVALID',
      message: 'line 1 is longer than 8388608 characters: expected at most that many a record',
    });
  });

  it('JSON numbers are kept as written: cells and JSON output (regression: 9007199254740993 came back as ...992)', async () => {
    const file = join(dir, 'ids.jsonl');
    await writeFile(
      file,
      '{"id": 9007199254740993, "score": 1.10, "n": 5, "e": 1E400, "nested": {"big": -12345678901234567890}, "s": "9007199254740993"}\n',
    );
    const s = await open(file);
    const [row] = await allRows(s);
    expect(row!.cells).toEqual([
      '9007199254740993',
      '1.10',
      '5',
      '1E400',
      '{"big":-12345678901234567890}',
      '9007199254740993',
    ]);
    const out = join(dir, 'out.jsonl');
    const w = await createOutputWriter({
      target: out,
      format: 'jsonl',
      inputHeader: s.rawHeader,
      jsonKeys: s.header,
      extraColumns: [],
    });
    await w.write({
      row: 1,
      input: row!,
      status: 'enriched',
      error: '',
      creditCharged: true,
      values: [],
    });
    await w.close();
    expect(await readFile(out, 'utf8')).toBe(
      '{"row":1,"input":{"id":9007199254740993,"score":1.10,"n":5,"e":1E400,"nested":{"big":-12345678901234567890},"s":"9007199254740993"},"status":"enriched","error":null,"credit_charged":true,"cached_at":null,"record":null}\n',
    );
  });

  it('a FIFO as input is read as a stream (copied once, like stdin), not hung on; its identity is its content', async () => {
    const fifo = join(dir, 'in.fifo');
    execFileSync('mkfifo', [fifo]);
    const writer = createWriteStream(fifo);
    writer.end(csv(20));
    const s = await open(fifo);
    expect(s.header).toEqual(['Email', 'Company']);
    expect(await allRows(s)).toHaveLength(20);
    expect(await allRows(s)).toHaveLength(20);
    expect(s.file).toBeUndefined();
    expect((await s.identity()).path).toBe('-');
    await expect(openInput('/dev/zero')).rejects.toMatchObject({ code: 'USAGE' });
  });
});

describe('-o naming the input file', () => {
  it('refuseInputAsOutput refuses the input, also through a symlinked directory; another file passes', async () => {
    await mkdir(join(dir, 'data'));
    await writeFile(join(dir, 'data', 'in.csv'), csv(3));
    await symlink(join(dir, 'data'), join(dir, 'alias'));
    const s = await open(join(dir, 'data', 'in.csv'));
    const same = await checkOutputTarget(join(dir, 'alias', 'in.csv'));
    expect(() => refuseInputAsOutput(s.file, same)).toThrow(
      expect.objectContaining({
        code: 'USAGE',
        message: expect.stringContaining('it is the input file') as string,
      }),
    );
    const other = await checkOutputTarget(join(dir, 'out.csv'));
    expect(() => refuseInputAsOutput(s.file, other)).not.toThrow();
  });
});
