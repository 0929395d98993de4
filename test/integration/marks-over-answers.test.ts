import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enrichFile, verifyEmailsFile } from '../../src/index.js';
import { openVerifyCache } from '../../src/bulk/verify-emails.js';
import {
  CONTACT_HEADER,
  clientForTest,
  contactRows,
  SANDBOX_MODES,
  sandboxForTest,
  tempDir,
  writeCsv,
} from './bulk-harness.js';

/**
 * A request sent again because its cached answer was too old, whose answer never came (the
 * service may have charged it): the mark goes over the old answer, so no other run sends it by
 * itself either. Regression: marks were written only where the cache held nothing, and the next
 * run of another file with the same max age sent those rows again and the account paid twice.
 */

const DAY = 86_400_000;

describe('a request sent again after its answer aged, and lost, is not sent by the next run', () => {
  it.concurrent.for(SANDBOX_MODES)(
    '$name: contacts: day 2 pays only for its new rows and writes the lost ones failed; a run with a longer max age still takes the old answers',
    async ({ specOnly }, t) => {
      const s = await sandboxForTest(t, { jobMs: 0, specOnly });
      // A client per run, as each CLI process has: one that has not yet seen the service echo
      // idempotency keys cannot send a lost POST again safely (DESIGN.md section 5).
      const client = () =>
        clientForTest(t, {
          baseUrl: s.url,
          apiKey: s.apiKey,
          sleep: async () => {},
          random: () => 0.5,
        });
      const dir = await tempDir();
      const rows = contactRows(12);
      const file = (name: string, n: number) =>
        writeCsv(dir, name, CONTACT_HEADER, rows.slice(0, n));
      const run = async (input: string, out: string, more: Record<string, unknown> = {}) =>
        enrichFile({
          kind: 'contacts',
          input,
          output: join(dir, out),
          service: { client: client(), baseUrl: s.url },
          runsDir: join(dir, 'runs'),
          cacheDir: join(dir, 'cache'),
          batchSize: 20,
          ...more,
        });
      // 40 days ago: the answers of 10 rows, too old for the default max age (30 days).
      const then = Date.now() - 40 * DAY;
      const env = { now: () => then, random: () => 0.5, sleep: async () => {} };
      expect((await run(await file('day0.csv', 10), 'o0.csv', { env })).exitCode).toBe(0);
      expect(s.admin.stats().credits_charged).toBe(10);

      // Today's run sends them again; the service processes its POST and the answer is lost.
      s.admin.setFaults({ next: [{ path: '/contacts', reset: true, after: true }] });
      const day1 = await run(await file('day1.csv', 10), 'o1.csv');
      expect(day1.exitCode).toBe(3);
      expect(day1.cacheHits).toBe(0);
      expect(s.admin.stats().credits_charged).toBe(20);

      // Another file holding them and two new rows: only the new rows are sent.
      const day2 = await run(await file('day2.csv', 12), 'o2.csv');
      expect(day2.exitCode).toBe(3);
      expect(day2).toMatchObject({ unconfirmedEarlier: 10, creditsCharged: 2 });
      expect(s.admin.stats().credits_charged).toBe(22);

      // A run that takes answers up to 60 days old is served the old ones (the mark is not an
      // answer, and hides none), and sends nothing.
      const longer = await run(await file('day3.csv', 12), 'o3.csv', { maxAgeMs: 60 * DAY });
      expect(longer).toMatchObject({ exitCode: 0, cacheHits: 12, creditsCharged: 0 });
      expect(s.admin.stats().credits_charged).toBe(22);

      // Asked to, a run sends them again, and its answers replace the marks.
      const resent = await run(await file('day4.csv', 12), 'o4.csv', { resendUnconfirmed: true });
      expect(resent).toMatchObject({ exitCode: 0, creditsCharged: 10 });
      const after = await run(await file('day5.csv', 12), 'o5.csv');
      expect(after).toMatchObject({ exitCode: 0, cacheHits: 12, creditsCharged: 0 });
      expect(s.admin.stats().credits_charged).toBe(32);
    },
  );

  it.concurrent.for(SANDBOX_MODES)(
    '$name: verify-emails: another list does not verify the lost address again; a longer max age takes its old verdict',
    async ({ specOnly }, t) => {
      const s = await sandboxForTest(t, { specOnly });
      const client = clientForTest(t, {
        baseUrl: s.url,
        apiKey: s.apiKey,
        sleep: async () => {},
        random: () => 0.5,
      });
      const dir = await tempDir();
      const addresses = ['ann@acme.com', 'bob@acme.com', 'cy@acme.com'];
      const list = (name: string, extra: string[] = []) =>
        writeCsv(
          dir,
          name,
          ['Email'],
          [...addresses, ...extra].map((a) => [a]),
        );
      const cacheDir = join(dir, 'cache');
      // 40 days ago, these addresses were verified (the cache's own entries, as a run keeps them).
      const seeded = openVerifyCache({
        baseUrl: s.url,
        account: client.account,
        policy: { read: true, write: true, maxAgeMs: 30 * DAY },
        dir: cacheDir,
      })!;
      for (const email of addresses)
        seeded.cache.put(email, {
          records: [{ email, status: 'valid', credit_charged: true, remaining_credits: 1 }],
          at: Date.now() - 40 * DAY,
          charged: true,
        });
      await seeded.close();
      const run = async (input: string, more: Record<string, unknown> = {}) =>
        verifyEmailsFile({
          input,
          output: `${input}.out.csv`,
          service: { client, baseUrl: s.url },
          runsDir: join(dir, 'runs'),
          cacheDir,
          concurrency: 1,
          ...more,
        });
      const paid = () => s.admin.stats().verification_credits_charged;

      // Too old: sent again, and the first answer is lost after the service charged it.
      s.admin.setFaults({ next: [{ path: '/email-verification', reset: true, after: true }] });
      const first = await run(await list('a.csv'));
      expect(first).toMatchObject({ sent: 3, unconfirmed: 1, exitCode: 3 });
      expect(paid()).toBe(3);

      const other = await run(await list('b.csv', ['dee@acme.com']));
      expect(other).toMatchObject({ sent: 1, cacheHits: 2, unconfirmed: 1, exitCode: 3 });
      expect(paid()).toBe(4);
      const plan = await run(await list('c.csv'), { dryRun: true });
      expect(plan).toMatchObject({ unconfirmedEarlier: 1, cached: 2, sent: 0 });
      const longer = await run(await list('d.csv'), { maxAgeMs: 60 * DAY });
      expect(longer).toMatchObject({ sent: 0, cacheHits: 3, unconfirmed: 0, exitCode: 0 });
      expect(paid()).toBe(4);
    },
  );
});
