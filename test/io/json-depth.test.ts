import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonNestingDepth, MAX_JSON_DEPTH } from '../../src/io/json-depth.js';
import { jsonCell, readJsonArray, readJsonLines } from '../../src/io/read-json.js';

const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);

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
    const dir = await mkdtemp(join(tmpdir(), 'enrich-deep-'));
    const deep = `{"email": "jane@acme.com", "x": ${nested(100_000)}}`;
    await writeFile(join(dir, 'a.json'), `[\n{"email": "bob@acme.com"},\n${deep}\n]`);
    await writeFile(join(dir, 'a.jsonl'), `{"email": "bob@acme.com"}\n${deep}\n`);
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
        message: expect.stringMatching(/expected at most 1000 levels of nesting, got 100001/),
        location: { line },
      });
    }
  });
});
