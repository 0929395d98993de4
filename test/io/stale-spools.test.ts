import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { gunzipToFile, removeStaleSpools, spoolToFile } from '../../src/io/spool-stdin.js';
import { tempDir } from '../integration/bulk-harness.js';
import { deadPid } from '../helpers/pids.js';

const hex = (pid: number) => pid.toString(16).padStart(8, '0');

async function spoolDir(dir: string, name: string, ageMs = 0): Promise<void> {
  await mkdir(join(dir, name));
  await writeFile(join(dir, name, 'stdin'), 'email\njane@acme.com\n');
  const at = (Date.now() - ageMs) / 1000;
  await utimes(join(dir, name), at, at);
}

describe('copies of stdin / of a gzip input left by killed runs', () => {
  it("a dead process's copy goes, a live one's stays; one of an earlier build (no pid) goes after a day (regression: kept for ever)", async () => {
    const dir = await tempDir('enrich-spools-');
    await spoolDir(dir, `enrich-stdin-${hex(deadPid())}-aaaaaa`);
    await spoolDir(dir, `enrich-stdin-${hex(process.pid)}-bbbbbb`);
    await spoolDir(dir, `enrich-stdin-${hex(process.ppid)}-cccccc`);
    await spoolDir(dir, 'enrich-stdin-OldOne', 2 * 86_400_000);
    await spoolDir(dir, 'enrich-stdin-Recent');
    await writeFile(join(dir, 'enrich-stdin-file'), 'not a spool');
    expect(await removeStaleSpools(dir)).toBe(2);
    expect((await readdir(dir)).sort()).toEqual(
      [
        `enrich-stdin-${hex(process.pid)}-bbbbbb`,
        `enrich-stdin-${hex(process.ppid)}-cccccc`,
        'enrich-stdin-Recent',
        'enrich-stdin-file',
      ].sort(),
    );
  });

  it("a new copy is named by its process, and sweeps a dead one's first", async () => {
    const dir = await tempDir('enrich-spools-');
    const dead = `enrich-stdin-${hex(deadPid())}-aaaaaa`;
    await spoolDir(dir, dead);
    const spool = await spoolToFile(Readable.from(['a,b\n']), dir);
    const names = await readdir(dir);
    expect(names).not.toContain(dead);
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(new RegExp(`^enrich-stdin-${hex(process.pid)}-`));
    await spool.remove();
    expect(await readdir(dir)).toEqual([]);
  });

  it('a damaged gzip read while the sweep looks at many copies is refused, never an unhandled error (regression: the gunzip failed before the copy listened, and the process ended with a stack trace)', async () => {
    const dir = await tempDir('enrich-spools-');
    // Live copies (this process's): each one looked at, none removed, so the sweep takes a while.
    for (let i = 0; i < 400; i++) await mkdir(join(dir, `enrich-stdin-${hex(process.pid)}-${i}`));
    const whole = gzipSync(Buffer.from('email\n' + 'jane@acme.com\n'.repeat(5000)));
    const damaged = Buffer.from(whole);
    damaged.fill(0x41, 20, 60); // a stored block's lengths no longer agree
    const file = join(dir, 'leads.csv.gz');
    await writeFile(file, damaged);
    await expect(gunzipToFile('leads.csv.gz', file, dir)).rejects.toMatchObject({
      code: 'INPUT_UNREADABLE',
    });
  });
});
