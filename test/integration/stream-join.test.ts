import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toBulkApi } from '../../src/api/bulk-api.js';
import type { InputSource } from '../../src/io/read.js';
import type { BulkApi } from '../../src/pipeline/types.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import {
  CONTACT_HEADER,
  contactRows,
  fastClient,
  runFile,
  sandboxPerTest,
  tempDir,
  writeCsv,
} from './bulk-harness.js';

// The one-pass join writes rows as their batches come back; when it cannot (a slow job
// at the head of a full window, a duplicate of a row already forgotten) it "spills" and
// a second pass over the input writes the rest, trailing the jobs (or, past a duplicate
// it forgot, once they are done). Every way the bytes must be the same.

const sandbox = sandboxPerTest();

/** The API with the results of the `nth` submitted job held back for `ms`. */
function slowNthJob(s: SandboxHandle, nth: number, ms: number): BulkApi {
  const real = toBulkApi(fastClient(s));
  const slow = new Set<string>();
  let submitted = 0;
  return {
    async submit(...args) {
      const job = await real.submit(...args);
      if (++submitted === nth) slow.add(job.job_id);
      return job;
    },
    async results(kind, jobId, url) {
      if (slow.has(jobId)) await new Promise((r) => setTimeout(r, ms));
      return real.results(kind, jobId, url);
    },
  };
}

describe('one-pass join with a second-pass fallback', () => {
  it('writes the same output and rejects when a slow job makes it spill mid-file', async () => {
    const sb = await sandbox();
    const dir = await tempDir();
    const rows = contactRows(2000, { dupEvery: 7, invalidEvery: 13, noMatchEvery: 11 });
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
    const onePass = await runFile(sb, file, {
      runsDir: join(dir, 'a'),
      output: { rejects: join(dir, 'rejects-a.csv') },
    });
    expect(onePass.summary.secondPassFrom).toBeNull();

    const spilled = await runFile(sb, file, {
      runsDir: join(dir, 'b'),
      // Other jobs come back in milliseconds; the 5th only after the window gave up on it.
      api: slowNthJob(sb, 5, 2500),
      join: { windowRows: 300, headWaitMs: 800 },
      output: { rejects: join(dir, 'rejects-b.csv') },
    });
    // Rows before the slow batch went out in one pass, the rest in the second.
    expect(spilled.summary.secondPassFrom).toBeGreaterThan(0);
    expect(spilled.summary.secondPassFrom).toBeLessThan(2000);
    expect(spilled.output).toBe(onePass.output);
    expect(spilled.summary.statuses).toEqual(onePass.summary.statuses);
    expect(spilled.summary.fill).toEqual(onePass.summary.fill);
    const rejectsA = await readFile(join(dir, 'rejects-a.csv'), 'utf8');
    expect(await readFile(join(dir, 'rejects-b.csv'), 'utf8')).toBe(rejectsA);
    expect(rejectsA.trim().split('\n')).toHaveLength(1 + Math.floor(2000 / 13));
  });

  it('spills at a duplicate whose first occurrence was written and forgotten', async () => {
    const sb = await sandbox();
    const dir = await tempDir();
    // Rows 1000-1099 repeat rows 0-99: far behind a window that keeps 10 outcomes.
    const unique = contactRows(1000);
    const rows = [...unique, ...unique.slice(0, 100).map((r, i) => [`D${i}`, ...r.slice(1)])];
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
    // A loaded machine must not make the head of the queue look slow: only the window decides.
    const patient = { headWaitMs: 120_000 };
    const kept = await runFile(sb, file, { runsDir: join(dir, 'a'), join: patient });
    expect(kept.summary.secondPassFrom).toBeNull();
    expect(kept.summary.duplicates).toBe(100);

    const forgot = await runFile(sb, file, {
      runsDir: join(dir, 'b'),
      join: { ...patient, keepOutcomes: 10 },
    });
    expect(forgot.summary.secondPassFrom).not.toBeNull();
    expect(forgot.summary.secondPassFrom).toBeLessThanOrEqual(1000);
    expect(forgot.output).toBe(kept.output);
    expect(sb.admin.stats().credits_charged).toBe(2000); // 1,000 unique rows, twice
  });

  it('companies with --explode, to CSV and JSON, are the same through either path', async () => {
    const sb = await sandbox();
    const dir = await tempDir();
    const lines = ['Company,Website,Notes'];
    for (let i = 0; i < 600; i++) lines.push(`Company ${i},company${i}.com,n${i}`);
    const file = join(dir, 'co.csv');
    await writeFile(file, `${lines.join('\n')}\n`);
    for (const format of ['csv', 'json'] as const) {
      const common = {
        kind: 'companies' as const,
        metadata: { top_matches_returned: 3 },
        output: { explode: true, format },
      };
      const a = await runFile(sb, file, { ...common, runsDir: join(dir, `a-${format}`) });
      const b = await runFile(sb, file, {
        ...common,
        runsDir: join(dir, `b-${format}`),
        api: slowNthJob(sb, 3, 2500),
        join: { windowRows: 150, headWaitMs: 800 },
      });
      expect(a.summary.secondPassFrom).toBeNull();
      expect(b.summary.secondPassFrom).toBeGreaterThan(0);
      expect(b.output).toBe(a.output);
      if (format === 'csv') expect(a.summary.outputRows).toBeGreaterThan(600);
    }
  });

  it('after a spill, writes rows while later jobs still run (the second pass trails the jobs)', async () => {
    const sb = await sandbox();
    const dir = await tempDir();
    const rows = contactRows(2000, { dupEvery: 9, invalidEvery: 17 });
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, rows);
    const plain = await runFile(sb, file, { runsDir: join(dir, 'a') });

    // How far a reading that started while the first pass still read has come: that is
    // the trailing pass, which reads a row only once it wrote the one before.
    let secondReadAt = -1;
    let reading = 0;
    const wrapSource = (source: InputSource): InputSource => ({
      ...source,
      rows: async function* () {
        const trailing = reading > 0;
        reading++;
        try {
          for await (const row of source.rows()) {
            if (trailing) secondReadAt = row.index;
            yield row;
          }
        } finally {
          reading--;
        }
      },
    });
    // The last job's results are held until 1,500 rows (of earlier jobs) are written (or 20 s).
    const real = toBulkApi(fastClient(sb));
    let submitted = 0;
    let lastJob = '';
    let releasedBy = '';
    const api: BulkApi = {
      async submit(...args) {
        const job = await real.submit(...args);
        if (++submitted === plain.summary.requests.submits) lastJob = job.job_id;
        return job;
      },
      async results(kind, jobId, url) {
        if (jobId === lastJob) {
          const started = Date.now();
          while (secondReadAt < 1500 && Date.now() - started < 20_000)
            await new Promise((r) => setTimeout(r, 20));
          releasedBy ||= secondReadAt >= 1500 ? 'rows written' : 'timeout';
        }
        return real.results(kind, jobId, url);
      },
    };
    let serviceBound = 0;
    const trailed = await runFile(sb, file, {
      runsDir: join(dir, 'b'),
      api,
      wrapSource,
      join: { windowRows: 150, headWaitMs: 0 },
      onServiceBound: () => serviceBound++,
    });
    expect(releasedBy).toBe('rows written');
    expect(serviceBound).toBe(1); // told once: the run waits for the service from then on
    expect(trailed.summary.secondPassFrom).not.toBeNull();
    expect(trailed.output).toBe(plain.output);
    expect(trailed.summary.statuses).toEqual(plain.summary.statuses);
  });

  it('waits for a job at the head of a full window when it comes back in time', async () => {
    const sb = await sandbox();
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(1500));
    const run = await runFile(sb, file, {
      runsDir: dir,
      api: slowNthJob(sb, 1, 100),
      join: { windowRows: 200, headWaitMs: 30_000 },
    });
    expect(run.summary.secondPassFrom).toBeNull();
    expect(run.summary.statuses.enriched).toBe(1500);
  });

  it('does not wait for rows past --max-credits: they are written at the end', async () => {
    const sb = await sandbox();
    const dir = await tempDir();
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(1000));
    const started = Date.now();
    // A head wait of 30 s would show if the window waited on rows that are never sent.
    let serviceBound = 0;
    const run = await runFile(sb, file, {
      runsDir: dir,
      maxCredits: 100,
      join: { windowRows: 200, headWaitMs: 30_000 },
      onServiceBound: () => serviceBound++,
    });
    expect(serviceBound).toBe(0); // the rows are let go for the budget, not for the service
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(run.summary.secondPassFrom).toBe(100);
    expect(run.summary.statuses).toMatchObject({ enriched: 100, failed: 900 });
    expect(run.summary.exitCode).toBe(5);
  });

  it('a file that turns out malformed half-way leaves no output, not even a partial one', async () => {
    const sb = await sandbox();
    const dir = await tempDir();
    const good = await readFile(
      await writeCsv(dir, 'good.csv', CONTACT_HEADER, contactRows(1500)),
      'utf8',
    );
    const file = join(dir, 'bad.csv');
    await writeFile(file, `${good}R999999,"never closed,x,y@z.com,Co,n\r\n`);
    const outputPath = join(dir, 'out.csv');
    await expect(runFile(sb, file, { runsDir: join(dir, 'runs'), outputPath })).rejects.toThrow(
      /never closed|quoted field/,
    );
    // Rows were written in one pass before the bad one was read: all of it is gone.
    expect((await readdir(dir)).filter((f) => f.startsWith('out'))).toEqual([]);
  });
});
