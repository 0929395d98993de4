import { existsSync, mkdirSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { appendFile, readFile, symlink, writeFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { enrichFile, type EnrichClient } from '../../src/index.js';
import { verifyEmailsFile } from '../../src/bulk/verify-emails.js';
import { outputLockDir } from '../../src/pipeline/journal/output-lock.js';
import { CONTACT_HEADER, contactRows, SANDBOX_MODES, tempDir, writeCsv } from './bulk-harness.js';
import {
  clientForTest as clientFor,
  sandboxForTest as sandbox,
  type TestEnd as Ctx,
} from './bulk-harness.js';

// Whose run a journal is: the account (a hash of its key) and the service are part of a run's
// identity, so one account's journaled answers, jobs and balance never reach another's run.

/** The two sandbox modes of each case run side by side (`it.concurrent.for(SANDBOX_MODES)`, each
 * pair in a describe of its own): each has its own sandbox, client, temp dir, runs and cache. */

async function rig(t: Ctx, o: { jobMs?: number; specOnly?: boolean } = {}) {
  const s = await sandbox(t, { jobMs: 0, ...o });
  const dir = await tempDir();
  const other = s.admin.createAccount({ credits: 1000 });
  const clientOf = (apiKey: string) => {
    const c = clientFor(t, { baseUrl: s.url, apiKey });
    return c;
  };
  const a = clientOf(s.apiKey);
  const b = clientOf(other.api_key);
  const warnings: string[] = [];
  const run = (
    client: EnrichClient,
    input: string,
    output: string,
    more: Record<string, unknown> = {},
  ) =>
    enrichFile({
      kind: 'contacts',
      input: join(dir, input),
      output: join(dir, output),
      service: { client, baseUrl: s.url },
      runsDir: join(dir, 'runs'),
      cacheDir: join(dir, 'cache'),
      batchSize: 20,
      timeoutMs: 20_000,
      onWarning: (w) => warnings.push(w),
      ...more,
    });
  return { s, dir, a, b, other, run, warnings };
}

describe("a run's journal belongs to its account", () => {
  describe("the same file run with another key is that key's own run", () => {
    it.concurrent.for(SANDBOX_MODES)(
      "the same file run with another key is that key's own run: nothing of the first key's run is served, and it pays for its own rows ($name)",
      async ({ specOnly }, t) => {
        // Regression: key B "resumed" key A's finished run: A's paid answers and A's balance,
        // nothing sent or charged to B.
        const { s, dir, a, b, run } = await rig(t, { specOnly });
        await writeCsv(dir, 'leads.csv', CONTACT_HEADER, contactRows(30));
        const first = await run(a, 'leads.csv', 'a.csv');
        expect(first.creditsCharged).toBe(30);
        const second = await run(b, 'leads.csv', 'b.csv');
        expect(second.resumed).toBe(false);
        expect(second.runKey).not.toBe(first.runKey);
        expect(second.creditsCharged).toBe(30);
        expect(second.creditsChargedEarlier).toBe(0);
        expect(second.remainingCredits).toBe(970); // B's balance, never A's
        expect(s.admin.stats().credits_charged).toBe(60);
        // A's own run again resumes A's journal: nothing sent.
        const again = await run(a, 'leads.csv', 'a2.csv');
        expect([again.resumed, again.creditsCharged]).toEqual([true, 0]);
        expect(s.admin.stats().credits_charged).toBe(60);
      },
    );
  });

  describe("jobs a run left not downloaded are not another account's", () => {
    it.concurrent.for(SANDBOX_MODES)(
      "jobs a run left not downloaded are not another account's key's to resume (the service does not show it them), and stay for their own key's next run ($name)",
      async ({ specOnly }, t) => {
        // Regression: key B polled key A's jobs, got 404s and waited until --timeout (exit 3).
        // Jobs of 1 s, here and below where a --no-wait run must leave them pending: under load,
        // a poll 150 ms after the submission found a job of 150 ms done.
        const { s, dir, a, b, run } = await rig(t, { jobMs: 1000, specOnly });
        await writeCsv(dir, 'leads.csv', CONTACT_HEADER, contactRows(30));
        const left = await run(a, 'leads.csv', 'a.csv', { wait: false });
        expect(left.jobs.pending).toBe(2);
        const asked = () => s.admin.stats().requests_by_status['404'] ?? 0;
        expect(asked()).toBe(0);
        const other = await run(b, 'leads.csv', 'b.csv');
        // B asked the service about one of A's jobs, once: not B's (404), so B's run is its own.
        expect(asked()).toBe(1);
        expect(other.exitCode).toBe(0);
        expect([other.resumed, other.creditsCharged, other.statuses.enriched]).toEqual([
          false,
          30,
          30,
        ]);
        const mine = await run(a, 'leads.csv', 'a.csv');
        expect([mine.exitCode, mine.resumed, mine.statuses.enriched]).toEqual([0, true, 30]);
        expect(s.admin.stats().credits_charged).toBe(60);
      },
    );
  });

  describe('a rotated key of the same account resumes the run its', () => {
    it.concurrent.for(SANDBOX_MODES)(
      "a rotated key of the same account resumes the run its earlier key left unfinished: nothing paid twice; either key's next run resumes it ($name)",
      async ({ specOnly }, t) => {
        // Regression: a run resumed with a new key of the same account was a new run and paid
        // again for every row the old key's jobs had paid for and not downloaded.
        const { s, dir, a, run } = await rig(t, { jobMs: 1000, specOnly });
        await writeCsv(dir, 'leads.csv', CONTACT_HEADER, contactRows(30));
        const left = await run(a, 'leads.csv', 'a.csv', { wait: false });
        expect(left.jobs.pending).toBe(2);
        const rotated = s.admin.createKey({ account_id: s.accountId });
        const c = clientFor(t, { baseUrl: s.url, apiKey: rotated.api_key });
        const taken = await run(c, 'leads.csv', 'a.csv');
        expect(taken.exitCode).toBe(0);
        expect(taken.runKey).toBe(left.runKey);
        // The jobs' charges are read as they are downloaded (by this run), as after any --no-wait.
        expect([taken.resumed, taken.creditsCharged]).toEqual([true, 30]);
        expect(taken.statuses.enriched).toBe(30);
        expect(s.admin.stats().credits_charged).toBe(30);
        // Journaled: the rotated key's next run resumes it without asking; so does the old key's.
        const posts = s.admin.stats().jobs_submitted;
        for (const client of [c, a]) {
          const again = await run(client, 'leads.csv', 'a.csv');
          expect([again.exitCode, again.resumed, again.runKey]).toEqual([0, true, left.runKey]);
        }
        expect([s.admin.stats().jobs_submitted, s.admin.stats().credits_charged]).toEqual([
          posts,
          30,
        ]);
      },
    );
  });

  it('a rotated key whose question about the old run gets no answer (5xx) stops before sending, saying what to run next', async (t) => {
    // Regression: exit 6 with no hint, where every other early stop names the command to run.
    const { s, dir, a, run } = await rig(t, { jobMs: 150 });
    await writeCsv(dir, 'leads.csv', CONTACT_HEADER, contactRows(10));
    await run(a, 'leads.csv', 'a.csv', { wait: false, command: 'enrich contacts leads.csv' });
    const rotated = s.admin.createKey({ account_id: s.accountId });
    const c = clientFor(t, { baseUrl: s.url, apiKey: rotated.api_key, retry: { maxAttempts: 1 } });
    s.admin.setFaults({ rates: { 500: 1 }, paths: ['/contacts/results'] });
    await expect(
      run(c, 'leads.csv', 'a.csv', { command: 'enrich contacts leads.csv' }),
    ).rejects.toMatchObject({
      exitCode: 6,
      hint: expect.stringMatching(
        /^Nothing was sent .*once it answers: enrich contacts leads\.csv$/,
      ),
    });
    expect(s.admin.stats().jobs_submitted).toBe(1);
  });

  it('a rotated key that takes over a run sends the rows the old key took from the cache (not there for it: the cache is per key), once, and nothing the old key sent', async (t) => {
    // Regression: they ended failed, and the run exit 3 naming --restart.
    const { s, dir, a, run } = await rig(t, { jobMs: 1000 });
    await writeCsv(dir, 'base.csv', CONTACT_HEADER, contactRows(10));
    await run(a, 'base.csv', 'base-out.csv');
    const grown = [...contactRows(10), ...contactRows(20).slice(10)];
    await writeCsv(dir, 'grown.csv', CONTACT_HEADER, grown);
    const left = await run(a, 'grown.csv', 'g.jsonl', { wait: false });
    expect([left.cacheHits, left.jobs.pending]).toEqual([10, 1]);
    expect(s.admin.stats().credits_charged).toBe(20);
    const rotated = s.admin.createKey({ account_id: s.accountId });
    const c = clientFor(t, { baseUrl: s.url, apiKey: rotated.api_key });
    const taken = await run(c, 'grown.csv', 'g.jsonl');
    expect([taken.exitCode, taken.statuses.enriched, taken.cacheResent]).toEqual([0, 20, 10]);
    expect(s.admin.stats().credits_charged).toBe(30);
    const again = await run(c, 'grown.csv', 'g.jsonl');
    expect([again.exitCode, again.statuses.enriched]).toEqual([0, 20]);
    expect(s.admin.stats().credits_charged).toBe(30);
  });

  it("verify-emails: a file verified with one key is verified again with another, never answered from the first key's journal", async (t) => {
    const { s, dir, a, b } = await rig(t);
    const input = join(dir, 've.csv');
    await writeFile(input, 'email\na@example.com\nb@example.com\n');
    const verify = (client: EnrichClient, output: string) =>
      verifyEmailsFile({
        input,
        output: join(dir, output),
        service: { client, baseUrl: s.url },
        runsDir: join(dir, 'runs'),
        cacheDir: join(dir, 'cache'),
      });
    const first = await verify(a, 've-a.csv');
    expect(first.resumed).toBe(false);
    const second = await verify(b, 've-b.csv');
    expect(second.resumed).toBe(false);
    expect(second.runKey).not.toBe(first.runKey);
  });
});

describe('earlier runs of other files, and runs going on now', () => {
  describe('jobs an unfinished run of another file', () => {
    it.concurrent.for(SANDBOX_MODES)(
      "jobs an unfinished run of another file (a dated export) left not downloaded are settled first: its rows are not bought again; another account's are not touched ($name)",
      async ({ specOnly }, t) => {
        // Regression: leads-28.csv (leads-27.csv plus 5 rows) paid again for the 40 rows of
        // leads-27.csv's --no-wait jobs, which were paid and done on the service.
        // Jobs of 600 ms: a --no-wait run on a loaded machine must leave both its jobs running
        // (with 100 ms the first could be done, and downloaded, before the run ended).
        const { s, dir, a, b, run, warnings } = await rig(t, { jobMs: 600, specOnly });
        const day1 = contactRows(40);
        const extra = ['R999999', 'New', 'Person', 'new.person@fresh.io', 'Fresh Inc', ''];
        await writeCsv(dir, 'leads-26.csv', CONTACT_HEADER, contactRows(60).slice(40));
        expect((await run(b, 'leads-26.csv', 'o26.csv', { wait: false })).jobs.pending).toBe(1);
        await writeCsv(dir, 'leads-27.csv', CONTACT_HEADER, day1);
        expect((await run(a, 'leads-27.csv', 'o27.csv', { wait: false })).jobs.pending).toBe(2);
        await writeCsv(dir, 'leads-28.csv', CONTACT_HEADER, [...day1, extra]);
        await delay(700); // the jobs are done on the service
        const charged = s.admin.stats().credits_charged;
        const next = await run(a, 'leads-28.csv', 'o28.csv');
        expect(next.exitCode).toBe(0);
        expect([next.cacheHits, next.creditsCharged, next.statuses.enriched]).toEqual([40, 1, 41]);
        expect(s.admin.stats().credits_charged).toBe(charged + 1);
        expect(warnings).toEqual([
          expect.stringMatching(
            /^an earlier run of .*leads-27\.csv left 2 job\(s\) not downloaded: downloading them first/,
          ),
        ]);
        // leads-27.csv's own run then writes its output from what was downloaded: nothing sent.
        const own = await run(a, 'leads-27.csv', 'o27.csv');
        expect([own.exitCode, own.resumed, own.statuses.enriched]).toEqual([0, true, 40]);
        expect(s.admin.stats().credits_charged).toBe(charged + 1);
      },
    );
  });

  describe('a run of another file stopped by --timeout', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a run of another file stopped by --timeout (its output written, its jobs still running) has its jobs settled first too ($name)',
      async ({ specOnly }, t) => {
        // Regression: such a run ends its journal with `done` (it wrote its output, those rows
        // failed), and only runs not done were looked at: leads-28.csv bought its 40 rows again.
        const { s, dir, a, run } = await rig(t, { jobMs: 800, specOnly });
        const day1 = contactRows(40);
        await writeCsv(dir, 'leads-27.csv', CONTACT_HEADER, day1);
        const stopped = await run(a, 'leads-27.csv', 'o27.csv', { timeoutMs: 200 });
        expect([stopped.exitCode, stopped.statuses.enriched]).toEqual([3, 0]);
        const extra = ['R999999', 'New', 'Person', 'new.person@fresh.io', 'Fresh Inc', ''];
        await writeCsv(dir, 'leads-28.csv', CONTACT_HEADER, [...day1, extra]);
        await delay(1_000); // the jobs are done on the service
        const charged = s.admin.stats().credits_charged;
        const next = await run(a, 'leads-28.csv', 'o28.csv');
        expect([next.exitCode, next.cacheHits, next.creditsCharged]).toEqual([0, 40, 1]);
        expect(s.admin.stats().credits_charged).toBe(charged + 1);
      },
    );
  });

  describe('a run of a file that grew while a run of it still goes on', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a run of a file that grew while a run of it still goes on stops before sending anything (exit 2): no row in flight is paid twice ($name)',
      async ({ specOnly }, t) => {
        // Regression: the second (overlapping cron) run sent every row of the first again.
        const { s, dir, a, run } = await rig(t, { jobMs: 600, specOnly });
        const input = await writeCsv(dir, 'leads.csv', CONTACT_HEADER, contactRows(40));
        const first = run(a, 'leads.csv', 'out.csv');
        while (s.admin.stats().credits_charged < 40) await delay(20);
        await appendFile(input, 'R999999,New,Person,new.person@fresh.io,Fresh Inc,\r\n');
        await expect(run(a, 'leads.csv', 'out.csv')).rejects.toMatchObject({
          code: 'RUN_IN_PROGRESS',
          exitCode: 2,
          message: expect.stringMatching(/leads\.csv/),
        });
        expect(s.admin.stats().credits_charged).toBe(40);
        await first.catch(() => undefined);
        const later = await run(a, 'leads.csv', 'out.csv');
        expect([later.exitCode, later.cacheHits, later.creditsCharged]).toEqual([0, 40, 1]);
        expect(s.admin.stats().credits_charged).toBe(41);
      },
    );
  });

  describe('a run writing the output file a live run of another input', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a run writing the output file a live run of another input writes stops before sending anything (exit 2), naming that input ($name)',
      async ({ specOnly }, t) => {
        // Regression: both ran and paid, and whichever ended last replaced the other's output.
        const { s, dir, a, run } = await rig(t, { jobMs: 600, specOnly });
        await writeCsv(dir, 'leads-27.csv', CONTACT_HEADER, contactRows(40));
        const other = contactRows(5).map((r) => [...r.slice(0, 5), 'other']);
        await writeCsv(dir, 'leads-28.csv', CONTACT_HEADER, other);
        const first = run(a, 'leads-27.csv', 'report.csv');
        while (s.admin.stats().credits_charged < 40) await delay(20);
        await expect(run(a, 'leads-28.csv', 'report.csv')).rejects.toMatchObject({
          code: 'RUN_IN_PROGRESS',
          exitCode: 2,
          message: expect.stringMatching(/is writing .*report\.csv from .*leads-27\.csv/),
        });
        expect(s.admin.stats().jobs_submitted).toBe(2);
        expect((await first).exitCode).toBe(0);
        // Once it is done, the same call runs.
        expect((await run(a, 'leads-28.csv', 'report.csv')).exitCode).toBe(0);
      },
    );
  });

  describe('two runs of other inputs started at the same moment writing', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'two runs of other inputs started at the same moment writing one output file: exactly one runs and pays, the other stops before sending ($name)',
      async ({ specOnly }, t) => {
        // Regression: both passed the check (neither had noted its output yet), both paid, and
        // whichever ended last replaced the other's output, with exit 0 for both (cron lines of
        // one minute). Also through a symlinked directory, which read as another file.
        const { s, dir, a, run } = await rig(t, { jobMs: 300, specOnly });
        await writeCsv(dir, 'leads-27.csv', CONTACT_HEADER, contactRows(10));
        const other = contactRows(10).map((r) => [...r.slice(0, 5), 'other']);
        await writeCsv(dir, 'leads-28.csv', CONTACT_HEADER, other);
        await symlink(dir, join(dir, 'via-link'));
        const outcomes = await Promise.allSettled([
          run(a, 'leads-27.csv', 'report.csv'),
          run(a, 'leads-28.csv', join('via-link', 'report.csv')),
        ]);
        const done = outcomes.filter((o) => o.status === 'fulfilled');
        const refused = outcomes.filter((o) => o.status === 'rejected');
        expect(done).toHaveLength(1);
        expect(refused.map((o) => (o.reason as { code?: string }).code)).toEqual([
          'RUN_IN_PROGRESS',
        ]);
        expect(s.admin.stats().credits_charged).toBe(10);
        expect(s.admin.stats().jobs_submitted).toBe(1);
      },
    );
  });

  it('a run the output claim refuses leaves no journal: its next run is a new run, not "(resumed)"', async (t) => {
    // Regression: the refused run had opened its journal (header only, nothing sent), so its
    // next run found it and said "(resumed)". Here another live run notes the same output
    // between this run's first check and its claim, as a run started at the same moment does.
    const { s, dir, a, run } = await rig(t);
    await writeCsv(dir, 'leads-28.csv', CONTACT_HEADER, contactRows(5));
    const runsDir = join(dir, 'runs');
    mkdirSync(runsDir, { recursive: true });
    const journals = () =>
      readdirSync(runsDir).filter((k) => existsSync(join(runsDir, k, 'journal.jsonl')));
    // Another process (a live pid: this one's parent) takes the output's lock.
    const lockDir = outputLockDir(runsDir, join(realpathSync(dir), 'report.csv'));
    let noted = false;
    const now = () => {
      // This run's journal is open (its header written): the other run claims the output now.
      if (!noted && journals().length > 0) {
        noted = true;
        mkdirSync(lockDir, { recursive: true });
        writeFileSync(join(lockDir, 'lock'), String(process.ppid));
        const note = { pid: process.ppid, key: 'other-run', input: 'leads-27.csv' };
        writeFileSync(join(lockDir, 'holder.json'), JSON.stringify(note));
      }
      return Date.now();
    };
    await expect(run(a, 'leads-28.csv', 'report.csv', { env: { now } })).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
      message: expect.stringMatching(/is writing .*report\.csv from leads-27\.csv/),
    });
    expect(noted).toBe(true);
    expect(journals()).toEqual([]);
    expect(s.admin.stats().jobs_submitted).toBe(0);
    rmSync(join(lockDir, 'lock'));
    const next = await run(a, 'leads-28.csv', 'report.csv');
    expect([next.exitCode, next.resumed, next.creditsCharged]).toEqual([0, false, 5]);
  });

  describe('two sheets of one workbook with the same header are two runs', () => {
    it.concurrent.for(SANDBOX_MODES)(
      "two sheets of one workbook with the same header are two runs: the second is looked up and paid for, never answered with the first sheet's rows ($name)",
      async ({ specOnly }, t) => {
        // Regression: --sheet Feb resumed the run of the first sheet (same file, same mapping):
        // nothing sent, exit 0, and every Feb row written with the Jan row's answer beside it.
        const { s, dir, a, run } = await rig(t, { specOnly });
        const wb = new ExcelJS.Workbook();
        const months: [string, string[][]][] = [
          ['Jan', contactRows(5)],
          ['Feb', contactRows(10).slice(5)],
        ];
        for (const [name, rows] of months) {
          const ws = wb.addWorksheet(name);
          ws.addRow(CONTACT_HEADER);
          for (const row of rows) ws.addRow(row);
        }
        await wb.xlsx.writeFile(join(dir, 'months.xlsx'));
        const jan = await run(a, 'months.xlsx', 'jan.jsonl');
        expect([jan.exitCode, s.admin.stats().credits_charged]).toEqual([0, 5]);
        for (const sheet of ['Feb', 2]) {
          const feb = await run(a, 'months.xlsx', `feb-${sheet}.jsonl`, { read: { sheet } });
          expect(feb.exitCode).toBe(0);
          expect(feb.runKey).not.toBe(jan.runKey);
          const lines = (await readFile(join(dir, `feb-${sheet}.jsonl`), 'utf8'))
            .trim()
            .split('\n');
          const asked = lines.map((l) => {
            const { input, record } = JSON.parse(l) as {
              input: Record<string, string>;
              record: { email?: string } | null;
            };
            return [input[CONTACT_HEADER[3]!], record?.email];
          });
          expect(asked).toHaveLength(5);
          for (const [sent, answered] of asked) expect(answered).toBe(sent);
        }
        // Feb paid once (the second spelling of it resumes its run); Jan's run still resumes.
        expect(s.admin.stats().credits_charged).toBe(10);
        const again = await run(a, 'months.xlsx', 'jan2.jsonl');
        expect([again.resumed, again.runKey]).toEqual([true, jan.runKey]);
      },
    );
  });

  describe('a file read with the wrong --encoding', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'a file read with the wrong --encoding, then read right, is a new run: its rows are looked up again, never answered with the garbled lookups ($name)',
      async ({ specOnly }, t) => {
        // Regression: the run read right resumed the garbled one (same file, same header): nothing
        // sent, exit 0, every row written with the answer to its mis-decoded name ("MÃ¼ller").
        const { s, dir, a, run } = await rig(t, { specOnly });
        const rows = contactRows(4).map((r, i) => [
          r[0]!,
          'Zoë',
          `Müller${i}`,
          '',
          'Bäckerei Groß',
          '',
        ]);
        await writeCsv(dir, 'people.csv', CONTACT_HEADER, rows);
        const wrong = await run(a, 'people.csv', 'wrong.jsonl', { read: { encoding: 'latin1' } });
        expect([wrong.exitCode, s.admin.stats().credits_charged]).toEqual([0, 4]);
        const right = await run(a, 'people.csv', 'right.jsonl');
        expect([right.exitCode, right.resumed]).toEqual([0, false]);
        expect(right.runKey).not.toBe(wrong.runKey);
        const names = (await readFile(join(dir, 'right.jsonl'), 'utf8'))
          .trim()
          .split('\n')
          .map(
            (l) => (JSON.parse(l) as { record: { last_name?: string } | null }).record?.last_name,
          );
        expect(names).toEqual(['Müller0', 'Müller1', 'Müller2', 'Müller3']);
        expect(s.admin.stats().credits_charged).toBe(8);
      },
    );
  });

  it('verify-emails: a run writing the output file a live verification of another list writes stops before sending anything', async (t) => {
    const s = await sandbox(t, { faults: { latency_ms: 30 } });
    const dir = await tempDir();
    const client = clientFor(t, { baseUrl: s.url, apiKey: s.apiKey });
    const paid = () => s.admin.stats().verification_credits_charged;
    const verify = async (name: string, from: number) => {
      const input = join(dir, name);
      const emails = Array.from({ length: 20 }, (_, i) => `lead${from + i}@firm.com`);
      await writeFile(input, `email\n${emails.join('\n')}\n`);
      return verifyEmailsFile({
        input,
        output: join(dir, 'verified.csv'),
        service: { client, baseUrl: s.url },
        runsDir: join(dir, 'runs'),
        cacheDir: join(dir, 'cache'),
        concurrency: 2,
      });
    };
    const first = verify('monday.csv', 0);
    while (paid() < 2) await delay(5);
    await expect(verify('tuesday.csv', 100)).rejects.toMatchObject({
      code: 'RUN_IN_PROGRESS',
      message: expect.stringMatching(/is writing .*verified\.csv from .*monday\.csv/),
    });
    expect((await first).exitCode).toBe(0);
    expect(paid()).toBe(20); // tuesday.csv sent nothing
  });

  describe('verify-emails: a list that grew while a run of it goes on', () => {
    it.concurrent.for(SANDBOX_MODES)(
      'verify-emails: a run of a list that grew while a run of it still goes on stops before sending anything (exit 2): no address in flight is paid twice ($name)',
      async ({ specOnly }, t) => {
        // Regression: the second (overlapping cron) run sent every address the first had not
        // answered yet, and both went on paying for them.
        const s = await sandbox(t, { specOnly, faults: { latency_ms: 30 } });
        const dir = await tempDir();
        const client = clientFor(t, { baseUrl: s.url, apiKey: s.apiKey });
        const paid = () => s.admin.stats().verification_credits_charged;
        const input = join(dir, 'list.csv');
        const emails = Array.from({ length: 40 }, (_, i) => `lead${i}@firm${i % 7}.com`);
        await writeFile(input, `email\n${emails.join('\n')}\n`);
        const verify = () =>
          verifyEmailsFile({
            input,
            output: join(dir, 'out.csv'),
            service: { client, baseUrl: s.url },
            runsDir: join(dir, 'runs'),
            cacheDir: join(dir, 'cache'),
            concurrency: 2,
          });
        const first = verify();
        while (paid() < 4) await delay(5);
        await appendFile(input, 'new.lead@fresh.io\n');
        await expect(verify()).rejects.toMatchObject({
          code: 'RUN_IN_PROGRESS',
          exitCode: 2,
          message: expect.stringMatching(/list\.csv/),
        });
        // The first stops too (its list changed under it), keeping the answers it had in flight.
        await expect(first).rejects.toMatchObject({ code: 'INPUT_CHANGED' });
        const later = await verify();
        expect([later.exitCode, later.cacheHits + later.sent]).toEqual([0, 41]);
        expect(paid()).toBe(41); // each address once
      },
    );
  });
});
