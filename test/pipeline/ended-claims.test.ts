import { appendFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keepBatchKeys } from '../../src/pipeline/journal/batch-keys.js';
import { openJournal, type Journal } from '../../src/pipeline/journal/journal.js';
import {
  endedRunKeys,
  endedRuns,
  markEnded,
  removeEndedClaims,
} from '../../src/pipeline/run/ended-claims.js';
import { ROW_CLAIMS_DIR } from '../../src/pipeline/run/row-claims.js';
import { tempDir } from '../integration/bulk-harness.js';

// The claims of runs that ended with jobs not downloaded (ended-claims.ts), read directly: a
// marker `<run>.ended` in the claims directory, the run's kept batch keys the claims.

/** Opens (or resumes) run `run` of `runsDir`: its lock is held until `close`. */
function journalOf(runsDir: string, run: string): Promise<Journal> {
  return openJournal({
    runsDir,
    key: run,
    header: {
      kind: 'contacts',
      input: { path: `/${run}.csv`, size: 1, sha256: 'a'.repeat(64) },
      options: {},
      command: `enrich contacts ${run}.csv`,
    },
    restart: false,
    now: () => 1,
  });
}

/** Batch `batch` sent (its keys kept first, when given) and its job accepted. */
async function accepted(j: Journal, batch: string, keys?: string[]): Promise<void> {
  if (keys) await (await keepBatchKeys(j.dir, batch, keys))();
  await j.append({ t: 'submit', batch, first: 0, last: 1, count: 2, idem: `i${batch}` });
  await j.append({
    t: 'accepted',
    batch,
    job: `job-${batch}`,
    url: `http://x/r/job-${batch}`,
    expires: null,
  });
}

/** Batch `batch` downloaded. */
function spooled(j: Journal, batch: string): Promise<void> {
  return j.append({
    t: 'spooled',
    batch,
    records: 2,
    credits: 2,
    remaining: 10,
    creditError: false,
  });
}

/** A runs directory whose run `r27` ended with batch 0 (k1, k2) accepted and not downloaded. */
async function endedRun() {
  const runsDir = await tempDir('enrich-ended-');
  const j = await journalOf(runsDir, 'r27');
  await accepted(j, '0', ['k1', 'k2']);
  await j.close();
  const dir = join(runsDir, ROW_CLAIMS_DIR);
  await mkdir(dir, { recursive: true });
  return { runsDir, dir };
}

const NOW = 1_000;

describe('endedRuns: the rows of runs that ended with jobs not downloaded', () => {
  it('a marker holds its run’s kept keys for the pid it names; one naming no pid holds them for pid 0', async () => {
    const { runsDir, dir } = await endedRun();
    await writeFile(join(dir, 'r27.ended'), '4242\n');
    const ended = endedRuns(runsDir, dir, 'r28');
    await ended.refresh(new Set(['r27.ended']), NOW);
    expect(ended.holderOf('k2')).toEqual({ pid: 4242, run: 'r27', ended: true, live: false });
    expect(ended.holderOf('k3')).toBeUndefined();
    for (const text of ['not a pid\n', '12.5\n', '1e400\n']) {
      await writeFile(join(dir, 'r27.ended'), text);
      const again = endedRuns(runsDir, dir, 'r28');
      await again.refresh(new Set(['r27.ended']), NOW);
      expect(again.holderOf('k1')).toEqual({ pid: 0, run: 'r27', ended: true, live: false });
    }
  });

  it('a marker removed since (by another run, or cache clear) holds nothing more', async () => {
    const { runsDir, dir } = await endedRun();
    await writeFile(join(dir, 'r27.ended'), '1\n');
    const ended = endedRuns(runsDir, dir, 'r28');
    await ended.refresh(new Set(['r27.ended']), NOW);
    expect(ended.holderOf('k1')?.run).toBe('r27');
    await ended.refresh(new Set(), NOW);
    expect(ended.holderOf('k1')).toBeUndefined();
  });

  it('its journal read again once it changed: a job downloaded frees its rows, a new job holds its own', async () => {
    const { runsDir, dir } = await endedRun();
    await writeFile(join(dir, 'r27.ended'), '1\n');
    const ended = endedRuns(runsDir, dir, 'r28');
    const names = new Set(['r27.ended']);
    await ended.refresh(names, NOW);
    const j = await journalOf(runsDir, 'r27');
    await accepted(j, '1', ['k3']);
    await spooled(j, '0');
    await j.close();
    await ended.refresh(names, NOW);
    expect(ended.holderOf('k1')).toBeUndefined();
    expect(ended.holderOf('k3')).toMatchObject({ run: 'r27', ended: true });
    expect(await readdir(dir)).toEqual(['r27.ended']);
  });

  it('a run whose journal went (retention) holds nothing more, and its marker goes', async () => {
    const { runsDir, dir } = await endedRun();
    await writeFile(join(dir, 'r27.ended'), '1\n');
    const ended = endedRuns(runsDir, dir, 'r28');
    const names = new Set(['r27.ended']);
    await ended.refresh(names, NOW);
    expect(ended.holderOf('k1')?.run).toBe('r27');
    await rm(join(runsDir, 'r27'), { recursive: true });
    await ended.refresh(names, NOW);
    expect(ended.holderOf('k1')).toBeUndefined();
    expect(await readdir(dir)).toEqual([]);
  });

  it('a run whose journal a live process holds (its resume, or a run settling its jobs) is said live, to be waited for', async () => {
    const { runsDir, dir } = await endedRun();
    await writeFile(join(dir, 'r27.ended'), '1\n');
    const ended = endedRuns(runsDir, dir, 'r28');
    const names = new Set(['r27.ended']);
    const resumed = await journalOf(runsDir, 'r27');
    try {
      await ended.refresh(names, NOW);
      expect(ended.holderOf('k1')).toEqual({ pid: 1, run: 'r27', ended: true, live: true });
    } finally {
      await resumed.close();
    }
    await ended.refresh(names, NOW);
    expect(ended.holderOf('k1')).toEqual({ pid: 1, run: 'r27', ended: true, live: false });
  });

  it('a run whose journal a live process holds frees the rows of a job it downloads at the next look', async () => {
    const { runsDir, dir } = await endedRun();
    await writeFile(join(dir, 'r27.ended'), '1\n');
    const ended = endedRuns(runsDir, dir, 'r28');
    const names = new Set(['r27.ended']);
    const settling = await journalOf(runsDir, 'r27');
    try {
      await ended.refresh(names, NOW);
      expect(ended.holderOf('k1')).toMatchObject({ run: 'r27', live: true });
      await spooled(settling, '0');
      await ended.refresh(names, NOW);
      expect(ended.holderOf('k1')).toBeUndefined();
    } finally {
      await settling.close();
    }
  });

  it('a marker that cannot be read (a directory) still holds its run’s rows, for pid 0', async () => {
    const { runsDir, dir } = await endedRun();
    await mkdir(join(dir, 'r27.ended'));
    const ended = endedRuns(runsDir, dir, 'r28');
    await ended.refresh(new Set(['r27.ended']), NOW);
    expect(ended.holderOf('k1')).toEqual({ pid: 0, run: 'r27', ended: true, live: false });
  });

  it('a marker listed but removed meanwhile by another run, its claims ended, is no error', async () => {
    const { runsDir, dir } = await endedRun();
    await rm(join(runsDir, 'r27'), { recursive: true });
    const ended = endedRuns(runsDir, dir, 'r28');
    await ended.refresh(new Set(['r27.ended']), NOW);
    expect(ended.holderOf('k1')).toBeUndefined();
    await removeEndedClaims(runsDir, dir, ['r27.ended'], NOW);
    expect(await readdir(dir)).toEqual([]);
  });

  it('what is no marker in the claims directory is left alone, and holds nothing', async () => {
    const { runsDir, dir } = await endedRun();
    await writeFile(join(dir, '123-abc.claims'), '123 abc\n+k1\n');
    await writeFile(join(dir, 'r27'), '1\n');
    const ended = endedRuns(runsDir, dir, 'r28');
    await ended.refresh(new Set(['123-abc.claims', 'r27']), NOW);
    expect(ended.holderOf('k1')).toBeUndefined();
    expect((await readdir(dir)).sort()).toEqual(['123-abc.claims', 'r27']);
  });
});

describe('markEnded and removeEndedClaims', () => {
  it('a run with a job not downloaded is marked, privately, in a claims directory made private if it is not there', async () => {
    const { runsDir, dir } = await endedRun();
    await rm(dir, { recursive: true });
    await markEnded(runsDir, dir, 'r27', 4242, NOW);
    expect(await readdir(dir)).toEqual(['r27.ended']);
    expect(await readFile(join(dir, 'r27.ended'), 'utf8')).toBe('4242\n');
    expect((await stat(join(dir, 'r27.ended'))).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it('a run whose jobs not downloaded kept no keys (nothing to hold) is not marked; one of its batches that kept keys is', async () => {
    const runsDir = await tempDir('enrich-ended-');
    const dir = join(runsDir, ROW_CLAIMS_DIR);
    const j = await journalOf(runsDir, 'r27');
    await accepted(j, '0');
    await markEnded(runsDir, dir, 'r27', 1, NOW);
    expect(await readdir(dir).catch(() => [])).toEqual([]);
    expect(await endedRunKeys(runsDir, 'r27', NOW)).toEqual([]);
    await accepted(j, '1', ['k3']);
    await j.close();
    await markEnded(runsDir, dir, 'r27', 1, NOW);
    expect(await readdir(dir)).toEqual(['r27.ended']);
    expect(await endedRunKeys(runsDir, 'r27', NOW)).toEqual(['k3']);
  });

  it('a run whose jobs were all downloaded loses its marker', async () => {
    const { runsDir, dir } = await endedRun();
    await writeFile(join(dir, 'r27.ended'), '1\n');
    const j = await journalOf(runsDir, 'r27');
    await spooled(j, '0');
    await j.close();
    await markEnded(runsDir, dir, 'r27', 1, NOW);
    expect(await readdir(dir)).toEqual([]);
  });

  it('removeEndedClaims removes the markers of runs left nothing to hold, keeps the others and what is no marker', async () => {
    const { runsDir, dir } = await endedRun();
    const j = await journalOf(runsDir, 'r28');
    await accepted(j, '0', ['k5']);
    await spooled(j, '0');
    await accepted(j, '1'); // not downloaded, but no keys kept: nothing held
    await j.close();
    const names = ['r27.ended', 'r28.ended', 'r29.ended', '123-abc.claims'];
    for (const n of names) await writeFile(join(dir, n), '1\n');
    await appendFile(join(dir, '123-abc.claims'), '+k1\n');
    await removeEndedClaims(runsDir, dir, names, NOW);
    expect((await readdir(dir)).sort()).toEqual(['123-abc.claims', 'r27.ended']);
  });
});
