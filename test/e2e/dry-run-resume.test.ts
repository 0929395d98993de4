import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import {
  CONTACT_HEADER,
  SANDBOX_MODES,
  contactRows,
  sandboxForTest,
  tempDir,
  writeCsv,
} from '../integration/bulk-harness.js';
import { lostFirstAnswer } from '../helpers/lost-answer.js';

beforeAll(() => ensureBuilt());

type DryPlan = {
  sent: number;
  batches: number;
  max_credits: number;
  cached: number;
  resume?: Record<string, unknown>;
};

/**
 * `--dry-run` after an earlier attempt of the same run: the plan is the resume's plan (its
 * journal's batches), not a first run's. Each mode's case has its own sandbox, state and files.
 */
describe('enrich contacts --dry-run follows the journal of the run it would resume (e2e)', () => {
  it.concurrent.for(SANDBOX_MODES)(
    '$name: after --no-wait, the plan downloads the accepted jobs and sends nothing; after the run, its answers come from the journal (regression: planned to send and pay for every row again)',
    async ({ specOnly }, t) => {
      const sb = await sandboxForTest(t, { port: 0, host: '127.0.0.1', jobMs: 60_000, specOnly });
      const env = { ...(await tempEnv()), ENRICH_BASE_URL: sb.url, ENRICH_API_KEY: sb.apiKey };
      const dir = await tempDir();
      const input = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(40));
      const args = ['contacts', input, '-o', join(dir, 'out.csv'), '--batch-size', '10', '-q'];
      expect((await runCli([...args, '--no-wait'], { env })).code).toBe(0);
      expect(sb.admin.stats().jobs_submitted).toBe(4);

      const dry = await runCli([...args, '--dry-run', '--json'], { env });
      expect(dry.code, dry.stderr).toBe(0);
      const plan = JSON.parse(dry.stdout) as DryPlan;
      expect(plan).toMatchObject({ sent: 0, batches: 0, max_credits: 0, cached: 0 });
      expect(plan.resume).toMatchObject({
        finished: false,
        answered: 0,
        in_jobs: 40,
        unconfirmed: 0,
        expired: 0,
        resent: 0,
      });
      const text = await runCli([...args, '--dry-run'], { env });
      expect(text.stdout).toMatch(/^resumes\s+the unfinished run of this file started \S+Z/m);
      expect(text.stdout).toMatch(/^in_jobs\s+40 \(in jobs the service accepted/m);
      expect(text.stdout).toMatch(/^max_credits\s+0 /m);

      // The plan held: the resume sends nothing and pays nothing more.
      sb.admin.advanceClock(60_000);
      expect((await runCli(args, { env })).code).toBe(0);
      expect(sb.admin.stats().jobs_submitted).toBe(4);
      expect(sb.admin.stats().credits_charged).toBe(40);
      const after = JSON.parse((await runCli([...args, '--dry-run', '--json'], { env })).stdout);
      expect(after).toMatchObject({ sent: 0, max_credits: 0 });
      expect((after as DryPlan).resume).toMatchObject({ finished: true, answered: 40 });
      // --restart starts the run over: every row is planned again (from the results cache).
      const restart = await runCli([...args, '--dry-run', '--json', '--restart'], { env });
      expect(JSON.parse(restart.stdout)).toMatchObject({ sent: 0, cached: 40 });
      expect(JSON.parse(restart.stdout)).not.toHaveProperty('resume');
    },
  );

  it.concurrent.for(SANDBOX_MODES)(
    '$name: another file after a --no-wait run: the rows in that run’s jobs are planned downloaded (earlier_jobs), not sent; the run then pays only for the new rows (regression: planned sent, and cut by --max-credits)',
    async ({ specOnly }, t) => {
      const sb = await sandboxForTest(t, { port: 0, host: '127.0.0.1', jobMs: 5_000, specOnly });
      const env = { ...(await tempEnv()), ENRICH_BASE_URL: sb.url, ENRICH_API_KEY: sb.apiKey };
      const dir = await tempDir();
      const rows = contactRows(25);
      const day1 = await writeCsv(dir, 'day1.csv', CONTACT_HEADER, rows.slice(0, 20));
      const day2 = await writeCsv(dir, 'day2.csv', CONTACT_HEADER, rows);
      const opts = ['--batch-size', '10', '-q'];
      const first = ['contacts', day1, '-o', join(dir, 'day1.out.csv'), ...opts, '--no-wait'];
      expect((await runCli(first, { env })).code).toBe(0);
      expect(sb.admin.stats().credits_charged).toBe(20);
      sb.admin.advanceClock(5_000);

      const args = ['contacts', day2, '-o', join(dir, 'day2.out.csv'), ...opts];
      const dry = await runCli([...args, '--dry-run', '--json', '--max-credits', '5'], { env });
      expect(dry.code, dry.stderr).toBe(0);
      expect(JSON.parse(dry.stdout)).toMatchObject({
        cached: 0,
        earlier_jobs: 20,
        sent: 5,
        over_budget: 0,
        max_credits: 5,
      });
      const text = await runCli([...args, '--dry-run'], { env });
      expect(text.stdout).toMatch(/^earlier_jobs\s+20 \(in jobs earlier runs of other files left/m);
      const run = await runCli([...args, '--max-credits', '5', '--json'], { env });
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ credits_charged: 5 });
      expect(sb.admin.stats().credits_charged).toBe(25);
    },
  );

  it.concurrent.for(SANDBOX_MODES)(
    '$name: a batch whose POST got no answer is planned as the resume treats it: not sent by a service that keeps only the spec, sent again (and replayed) by one seen to honour idempotency keys',
    async ({ specOnly }, t) => {
      // The first POST is processed, then its connection reset: the run never learns its job.
      const { sb, env, dir } = await lostFirstAnswer(t, specOnly);
      const input = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(20));
      const args = ['contacts', input, '-o', join(dir, 'out.csv'), '--batch-size', '10'];
      const first = await runCli([...args, '--concurrency', '1', '-q'], { env });
      expect(first.code, first.stderr).toBe(3);
      expect(sb.admin.stats().jobs_submitted).toBe(2);

      const dry = await runCli([...args, '--dry-run', '--json', '-q'], { env });
      const plan = JSON.parse(dry.stdout) as DryPlan;
      const charged = sb.admin.stats().credits_charged;
      if (specOnly) {
        // No answer ever echoed an Idempotency-Key: the resume leaves the 10 rows failed.
        expect(plan).toMatchObject({ sent: 0, batches: 0, max_credits: 0 });
        expect(plan.resume).toMatchObject({ answered: 10, unconfirmed: 10, resent: 0 });
        const text = await runCli([...args, '--dry-run', '-q'], { env });
        expect(text.stdout).toMatch(
          /^unconfirmed\s+10 \(sent by an enrich run that never got their answer: they may have been charged; not sent again, they end "failed", exit 3; --resend-unconfirmed sends them\)$/m,
        );
        const asked = await runCli([...args, '--dry-run', '--json', '--resend-unconfirmed'], {
          env,
        });
        expect(JSON.parse(asked.stdout)).toMatchObject({
          sent: 10,
          batches: 1,
          max_credits: 10,
          resume: { unconfirmed: 0, resent: 10 },
        });
        // The plan held: the resume sends nothing.
        expect((await runCli([...args, '-q'], { env })).code).toBe(3);
        expect(sb.admin.stats().requests_by_path['/contacts']).toBe(2);
      } else {
        // The second batch's answer echoed its key: the resume sends the first again, and the
        // service replays it (no new job, no new charge); the plan says it is sent.
        expect(plan).toMatchObject({ sent: 10, batches: 1, max_credits: 10 });
        expect(plan.resume).toMatchObject({ answered: 10, unconfirmed: 0, resent: 10 });
        const text = await runCli([...args, '--dry-run', '-q'], { env });
        expect(text.stdout).toMatch(
          /^sent\s+10 \(10 of them sent again: no answer of theirs is kept\)$/m,
        );
        expect((await runCli([...args, '-q'], { env })).code).toBe(0);
        expect(sb.admin.stats().requests_by_path['/contacts']).toBe(3);
        expect(sb.admin.stats().jobs_submitted).toBe(2);
      }
      expect(sb.admin.stats().credits_charged).toBe(charged);
    },
  );
});
