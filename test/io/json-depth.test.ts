import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { duplicateTopLevelKey, jsonNestingDepth, MAX_JSON_DEPTH } from '../../src/io/json-depth.js';
import { jsonCell, readJsonArray, readJsonLines } from '../../src/io/read-json.js';

const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);

/**
 * Writes `bad` as the second record of a JSON array (line 3) and of a JSON Lines file (line 2),
 * and expects each reader to refuse it: INPUT_INVALID, exit 2, `message`, at its line.
 */
async function expectBothReadersRefuse(prefix: string, bad: string, message: RegExp) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await writeFile(join(dir, 'a.json'), `[\n{"email": "x@acme.com"},\n${bad}\n]`);
  await writeFile(join(dir, 'a.jsonl'), `{"email": "x@acme.com"}\n${bad}\n`);
  const opts = { name: 'a', encoding: 'utf-8', bomLength: 0 };
  const drain = async (it: AsyncIterable<unknown>) => {
    for await (const _ of it) void _;
  };
  for (const [read, line] of [
    [readJsonArray, 3],
    [readJsonLines, 2],
  ] as const) {
    const file = join(dir, read === readJsonArray ? 'a.json' : 'a.jsonl');
    await expect(drain(read(file, opts))).rejects.toMatchObject({
      code: 'INPUT_INVALID',
      exitCode: 2,
      message: expect.stringMatching(message),
      location: { line },
    });
  }
}

describe('deeply nested JSON input (regression: 100,000 levels ended in "Maximum call stack size exceeded", exit 1)', () => {
  it('measures nesting outside strings only, and skips short texts', () => {
    expect(jsonNestingDepth(`{"a": ${nested(5)}}`, 2)).toBe(6);
    expect(jsonNestingDepth(`{"a": "${'['.repeat(50)}\\"[["}`, 2)).toBe(1);
    expect(jsonNestingDepth(nested(10))).toBe(0);
    expect(jsonNestingDepth(nested(MAX_JSON_DEPTH + 1))).toBe(MAX_JSON_DEPTH + 1);
  });

  it('the deepest accepted value still becomes a cell', () => {
    const value = JSON.parse(nested(MAX_JSON_DEPTH)) as unknown;
    expect(jsonCell(value)).toHaveLength(2 * MAX_JSON_DEPTH);
  });

  it('a JSON array element or a JSON Lines line nested too deeply is INPUT_INVALID with its line', async () => {
    const deep = `{"email": "jane@acme.com", "x": ${nested(100_000)}}`;
    await expectBothReadersRefuse(
      'enrich-deep-',
      deep,
      /expected at most 1000 levels of nesting, got 100001/,
    );
  });
});

describe('a JSON record with a key given twice (regression: the first value was dropped without a word)', () => {
  it('finds a repeated top-level key, escapes and nesting aside', () => {
    const dup = (t: string) => duplicateTopLevelKey(t, Object.keys(JSON.parse(t) as object).length);
    expect(dup('{"email": "a@x.com", "id": 1, "email": "b@x.com"}')).toBe('email');
    expect(dup('{"e\\u006dail": 1, "email": 2}')).toBe('email');
    expect(
      dup(
        '{"url": "https://a.com/x:y", "s": "\\"a\\":", "a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]}',
      ),
    ).toBe(undefined);
    expect(dup('{"n": {"a": 1, "a": 2}, "a": 3}')).toBe(undefined); // only the columns' level
    expect(dup('{"a": 1, "b": {"x": 1}, "a": 2}')).toBe('a');
  });

  it('an array element or a JSON Lines line with a key twice is INPUT_INVALID naming the key and the line', async () => {
    const twice = '{"id": 7, "email": "jane@acme.com", "email": "bob@acme.com"}';
    await expectBothReadersRefuse('enrich-dupkey-', twice, /has the key "email" twice/);
  });
});

describe('JSON Lines under a .json name', () => {
  it('is INPUT_INVALID with a hint to name it .jsonl or pass --input-format jsonl; another bad start gets none', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-jsonl-name-'));
    await writeFile(join(dir, 'a.json'), '{"email": "a@acme.com"}\n{"email": "b@acme.com"}\n');
    await writeFile(join(dir, 'b.json'), '"email"\n');
    const opts = { name: 'a.json', encoding: 'utf-8', bomLength: 0 };
    const first = async (file: string) => {
      for await (const _ of readJsonArray(join(dir, file), opts)) void _;
    };
    await expect(first('a.json')).rejects.toMatchObject({
      code: 'INPUT_INVALID',
      hint: expect.stringMatching(/\.jsonl or pass --input-format jsonl/),
      location: { line: 1 },
    });
    const other = await first('b.json').catch((e: unknown) => e);
    expect(other).toMatchObject({ code: 'INPUT_INVALID' });
    expect((other as { hint?: string }).hint).toBeUndefined();
  });
});
