import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSpool, writeSpool } from '../../src/pipeline/spool.js';

/** The pid of a process that has already exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(r.stdout.toString());
}

describe('spool temp files (regression: a SIGKILL mid-spool left results-*.json.<pid>.tmp in the state dir)', () => {
  it('the next spool write of the run removes temps of dead writers, keeping live ones', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'enrich-spool-'));
    const dead = `results-3.json.${deadPid()}.tmp`;
    const live = `results-4.json.${process.ppid}.tmp`;
    await writeFile(join(dir, dead), '[{"half');
    await writeFile(join(dir, live), '[');
    await writeFile(join(dir, 'journal.jsonl'), '');
    await writeSpool(dir, '3', [{ a: 1 }]);
    expect((await readdir(dir)).sort()).toEqual(['journal.jsonl', live, 'results-3.json'].sort());
    expect(await readSpool(dir, '3')).toEqual([{ a: 1 }]);
  });
});
