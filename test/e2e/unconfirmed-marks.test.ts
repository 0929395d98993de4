import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, spawnCli } from '../api/harness.js';
import {
  CONTACT_HEADER,
  SANDBOX_MODES,
  contactRows,
  parseCsv,
  writeCsv,
} from '../integration/bulk-harness.js';
import { untilJournaled } from '../helpers/journaled.js';
import { faultyService, lostFirstAnswer } from '../helpers/lost-answer.js';

beforeAll(() => ensureBuilt());

/**
 * A batch whose POST got no answer (the service may have charged it) is not sent again by the
 * run's resume unless asked (DESIGN.md section 5); nor, since session 26, by a run of another
 * file holding the same rows: the day-2 export of a cron job, a copy, another list. Each mode's
 * case has its own sandbox, state, cache and files.
 */
describe('rows a run sent without an answer are not sent again by another file’s run (e2e)', () => {
  it.concurrent.for(SANDBOX_MODES)(
    '$name: day 2 (day 1 and two new rows) pays only for the new rows, writes the unconfirmed ones failed, exit 3; --resend-unconfirmed sends them (regression: sent and paid again silently)',
    async ({ specOnly }, t) => {
      // Day 1's first POST is processed, then its connection reset: its answer never comes.
      const { sb, env, dir } = await lostFirstAnswer(t, specOnly);
      const rows = contactRows(22);
      const day1 = await writeCsv(dir, 'day1.csv', CONTACT_HEADER, rows.slice(0, 20));
      const day2 = await writeCsv(dir, 'day2.csv', CONTACT_HEADER, rows);
      const opts = ['--batch-size', '10', '--concurrency', '1', '-q'];
      const first = await runCli(['contacts', day1, '-o', join(dir, 'day1.out.csv'), ...opts], {
        env,
      });
      expect(first.code, first.stderr).toBe(3);
      const charged = sb.admin.stats().credits_charged;
      expect(charged).toBe(20); // both batches were processed; only the second one's answer came

      const args = ['contacts', day2, '-o', join(dir, 'day2.out.csv'), ...opts];
      const plan = await runCli([...args, '--dry-run', '--json'], { env });
      expect(JSON.parse(plan.stdout)).toMatchObject({
        cached: 10,
        unconfirmed_earlier: 10,
        sent: 2,
        max_credits: 2,
      });
      const second = await runCli([...args, '--json'], { env });
      expect(second.code, second.stderr).toBe(3);
      expect(JSON.parse(second.stdout)).toMatchObject({
        cache: { hits: 10, unconfirmed: 10 },
        credits_charged: 2,
      });
      expect(second.stderr).toContain(
        `10 row(s) were not sent: an enrich run (of this file or another) sent them and never got their answer`,
      );
      expect(second.stderr).toContain(`--resend-unconfirmed`);
      expect(sb.admin.stats().credits_charged).toBe(charged + 2);
      const out = parseCsv(await readFile(join(dir, 'day2.out.csv'), 'utf8'));
      const status = out[0]!.indexOf('enrich_status');
      const error = out[0]!.indexOf('enrich_error');
      const failed = out.slice(1).filter((r) => r[status] === 'failed');
      expect(failed).toHaveLength(10);
      expect(failed[0]![error]).toMatch(
        /^not sent: an enrich run sent this row at \S+Z and its answer never came \(the service may have charged it\)/,
      );

      // Asked to: sent (and paid) again, and answered from then on.
      const resent = await runCli([...args, '--resend-unconfirmed', '--json'], { env });
      expect(resent.code, resent.stderr).toBe(0);
      expect(JSON.parse(resent.stdout)).toMatchObject({ credits_charged: 10 });
      expect(sb.admin.stats().credits_charged).toBe(charged + 12);
      const third = await runCli(['contacts', day2, '-o', join(dir, 'day3.out.csv'), ...opts], {
        env,
      });
      expect(third.code).toBe(0);
      expect(sb.admin.stats().credits_charged).toBe(charged + 12);
    },
  );

  it.concurrent.for(SANDBOX_MODES)(
    '$name: a run waiting for rows another run is sending, whose POST then ends unanswered, does not send them (regression: paid twice)',
    async ({ specOnly }, t) => {
      // Day 1's POST is held 2 s, processed, then its connection reset.
      const { sb, env, dir } = await faultyService(t, specOnly, {
        next: [{ path: '/contacts', delay_ms: 2_000, reset: true, after: true }],
      });
      const rows = contactRows(12);
      const day1 = await writeCsv(dir, 'day1.csv', CONTACT_HEADER, rows.slice(0, 10));
      const day2 = await writeCsv(dir, 'day2.csv', CONTACT_HEADER, rows);
      const first = await spawnCli(['contacts', day1, '-o', join(dir, 'day1.out.csv'), '-q'], {
        env,
      });
      // Day 2 starts once day 1's POST is on its way (its rows claimed), and waits for them: day 1
      // marks them when its POST ends unanswered (and settling its run would mark them too).
      expect(await untilJournaled(env.ENRICH_STATE_DIR!, /"t":"submit","batch":"0"/)).toBe(true);
      const second = await runCli(
        ['contacts', day2, '-o', join(dir, 'day2.out.csv'), '-q', '--json'],
        { env },
      );
      expect(await first.code).toBe(3);
      expect(second.code, second.stderr).toBe(3);
      expect(JSON.parse(second.stdout)).toMatchObject({
        cache: { unconfirmed: 10 },
        credits_charged: 2,
      });
      expect(sb.admin.stats().credits_charged).toBe(12);
    },
  );

  it.concurrent.for(SANDBOX_MODES)(
    '$name: a run killed while its POST was on the wire: another file’s run (before the killed one is resumed) does not send its rows either (regression: sent and paid again)',
    async ({ specOnly }, t) => {
      // Day 1's only POST is held by the service until the process is gone.
      const { sb, env, dir } = await faultyService(t, specOnly, {
        next: [{ path: '/contacts', delay_ms: 8_000 }],
      });
      const rows = contactRows(12);
      const day1 = await writeCsv(dir, 'day1.csv', CONTACT_HEADER, rows.slice(0, 10));
      const day2 = await writeCsv(dir, 'day2.csv', CONTACT_HEADER, rows);
      const killed = await spawnCli(['contacts', day1, '-o', join(dir, 'day1.out.csv'), '-q'], {
        env,
      });
      const state = env.ENRICH_STATE_DIR!;
      expect(await untilJournaled(state, /"t":"submit","batch":"0"/)).toBe(true);
      killed.child.kill('SIGKILL');
      await killed.code;
      sb.admin.setFaults({});

      const args = ['contacts', day2, '-o', join(dir, 'day2.out.csv'), '-q', '--json'];
      // The dry run reads the killed run's batch keys as the run's start will mark them.
      const plan = await runCli([...args, '--dry-run'], { env });
      expect(JSON.parse(plan.stdout)).toMatchObject({ unconfirmed_earlier: 10, sent: 2 });
      const second = await runCli(args, { env });
      expect(second.code, second.stderr).toBe(3);
      expect(JSON.parse(second.stdout)).toMatchObject({
        cache: { unconfirmed: 10 },
        credits_charged: 2,
      });
      expect(sb.admin.stats().records_submitted).toBeLessThanOrEqual(12);
    },
  );
});

/**
 * `verify-emails` journals each address before its request: a run killed with one on the wire
 * leaves it journaled sent, with no answer. Since session 27 a run of another list does not send
 * it either (before, only the killed run's own resume held it back).
 */
describe('an address a killed verify-emails run sent is not verified again by another list’s run (e2e)', () => {
  const VERIFY = '/email-verification';

  it.concurrent.for(SANDBOX_MODES)(
    '$name: killed mid-request, then another list: its dry run and its run leave that address unsent, failed, exit 3 (regression: verified and paid again)',
    async ({ specOnly }, t) => {
      const { sb, env, dir } = await faultyService(t, specOnly, {
        next: [{ path: VERIFY, delay_ms: 15_000 }],
      });
      const verifyRequests = () => sb.admin.stats().requests_by_path[VERIFY] ?? 0;
      const rows = contactRows(5);
      const day1 = await writeCsv(dir, 'day1.csv', CONTACT_HEADER, rows.slice(0, 3));
      const day2 = await writeCsv(dir, 'day2.csv', CONTACT_HEADER, rows);
      const killed = await spawnCli(
        ['verify-emails', day1, '-o', join(dir, 'day1.out.csv'), '--concurrency', '1', '-q'],
        { env },
      );
      expect(await untilJournaled(env.ENRICH_STATE_DIR!, /"t":"vsend"/)).toBe(true);
      killed.child.kill('SIGKILL');
      await killed.code;
      sb.admin.setFaults({});
      const before = verifyRequests();

      const args = ['verify-emails', day2, '-o', join(dir, 'day2.out.csv'), '-q', '--json'];
      const plan = await runCli([...args, '--dry-run'], { env });
      expect(JSON.parse(plan.stdout)).toMatchObject({ unconfirmed_earlier: 1, sent: 4 });
      const second = await runCli(args, { env });
      expect(second.code, second.stderr).toBe(3);
      expect(JSON.parse(second.stdout)).toMatchObject({ unconfirmed: 1, sent: 4 });
      // Day 1's request is still held by the service: day 2's are the four new addresses.
      expect(verifyRequests() - before).toBe(4);
    },
  );

  it.concurrent.for(SANDBOX_MODES)(
    '$name: a run waiting for an address another run is sending, when that run is killed, does not send it (regression: paid twice)',
    async ({ specOnly }, t) => {
      const { env, dir } = await faultyService(t, specOnly, {
        next: [{ path: VERIFY, delay_ms: 6_000 }],
      });
      const rows = contactRows(5);
      const day1 = await writeCsv(dir, 'day1.csv', CONTACT_HEADER, rows.slice(0, 1));
      const day2 = await writeCsv(dir, 'day2.csv', CONTACT_HEADER, rows);
      const killed = await spawnCli(['verify-emails', day1, '-o', join(dir, 'day1.out.csv')], {
        env,
      });
      expect(await untilJournaled(env.ENRICH_STATE_DIR!, /"t":"vsend"/)).toBe(true);
      const waiting = await spawnCli(
        ['verify-emails', day2, '-o', join(dir, 'day2.out.csv'), '--json', '--no-progress'],
        { env },
      );
      for (let i = 0; i < 200 && !waiting.out.stderr.includes('waiting for'); i++)
        await new Promise((r) => setTimeout(r, 25));
      expect(waiting.out.stderr).toContain('waiting for another enrich process');
      killed.child.kill('SIGKILL');
      await killed.code;
      expect(await waiting.code, waiting.out.stderr).toBe(3);
      expect(JSON.parse(waiting.out.stdout)).toMatchObject({ unconfirmed: 1, sent: 4 });
    },
  );
});
