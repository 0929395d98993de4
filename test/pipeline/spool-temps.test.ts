import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempNameFor } from '../../src/io/stale-temps.js';
import { readSpool, writeSpool } from '../../src/pipeline/journal/spool.js';
import { deadPid } from '../helpers/pids.js';

describe('spool temp files (regression: a SIGKILL mid-spool left a results temp file in the state dir)', () => {
  it('the next spool write of the run removes temps of dead writers, keeping live ones', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-spool-'));
    const dead = tempNameFor('results-3.json', deadPid(), 'abcd0123');
    const live = tempNameFor('results-3.json', process.ppid, 'abcd0123');
    await writeFile(join(dir, dead), '[{"half');
    await writeFile(join(dir, live), '[');
    await writeFile(join(dir, 'journal.jsonl'), '');
    await writeSpool(dir, '3', [{ a: 1 }]);
    expect((await readdir(dir)).sort()).toEqual(['journal.jsonl', live, 'results-3.json'].sort());
    expect(await readSpool(dir, '3')).toEqual([{ a: 1 }]);
  });
});
