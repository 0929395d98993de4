import { cp, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect } from 'vitest';
import { verifyEmailsFile, type EnrichClient } from '../../src/index.js';
import { parseJournal } from '../../src/pipeline/journal/journal.js';
import { rootTest } from '../helpers/root.js';
import { withTmpfs } from '../helpers/tmpfs.js';
import {
  fastClient,
  parseCsv,
  SANDBOX_MODES,
  sandboxPerTest,
  tempDir,
  writeCsv,
} from './bulk-harness.js';

// A state directory that fills up while `verify-emails` runs: the answers that came back as
// the journal stopped taking lines were paid for, and are in the results cache.

const sandbox = sandboxPerTest();
const clients: EnrichClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

const ADDRESSES = 700; // all distinct: the credits charged count them
const rows = () =>
  Array.from({ length: ADDRESSES }, (_, i) => [`R${i}`, `person${i}@company${i % 97}.com`]);

/** The output as objects by column name. */
async function readOutput(path: string): Promise<Record<string, string>[]> {
  const [header, ...body] = parseCsv(await readFile(path, 'utf8'));
  return body.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i] ?? ''])));
}

/** The addresses a journal says were sent and never answered nor failed. */
async function sentWithoutAnswer(runsDir: string): Promise<string[]> {
  const files = (await readdir(runsDir, { recursive: true })).filter((f) =>
    f.endsWith('journal.jsonl'),
  );
  const events = parseJournal(await readFile(join(runsDir, files[0]!), 'utf8'));
  const settled = new Set(
    events.flatMap((e) => (e.t === 'vanswer' || e.t === 'vfail' ? [e.addr] : [])),
  );
  return events.flatMap((e) => (e.t === 'vsend' && !settled.has(e.addr) ? [e.addr] : []));
}

describe.each(SANDBOX_MODES)(
  'verify-emails with a state directory that fills up ($name sandbox)',
  ({ specOnly }) => {
    rootTest(
      '(root: a tmpfs) the answers paid for as the journal stopped are kept: the resume takes them from the cache, sends none again, and leaves none "may have been charged" (regression: failed, charge unknown); the rows not sent name the full disk (regression: "internal error")',
      async () => {
        const s = await sandbox({ specOnly });
        const client = fastClient(s);
        clients.push(client);
        const dir = await tempDir('enrich-verify-full-');
        const input = await writeCsv(dir, 'list.csv', ['Id', 'Email'], rows());
        const output = join(dir, 'verified.csv');
        const base = {
          input,
          output,
          service: { client, baseUrl: s.url },
          cacheDir: join(dir, 'cache'),
          concurrency: 8,
        };
        const runsDir = join(dir, 'runs');
        await withTmpfs('size=32k', async (small) => {
          const full = verifyEmailsFile({ ...base, runsDir: join(small, 'runs') });
          await expect(full).rejects.toMatchObject({ code: 'FILE_SYSTEM' });
          // The space is freed: the state directory goes on elsewhere, as it was.
          await cp(join(small, 'runs'), runsDir, { recursive: true });
        });
        const first = await readOutput(output);
        const paid = first.filter((r) => r['verify_credit_charged'] === 'true');
        expect(paid.length).toBeGreaterThan(20);
        expect(paid.length).toBe(s.admin.stats().verification_credits_charged);
        const notSent = first.filter((r) => r['enrich_error']!.startsWith('not sent'));
        expect(notSent.length).toBeGreaterThan(0);
        for (const r of notSent)
          expect(r['enrich_error']).toMatch(/^not sent: cannot write .*disk is full/);
        // What this test is about: answers paid for whose line never reached the journal.
        const lost = new Set(await sentWithoutAnswer(runsDir));
        expect(paid.filter((r) => lost.has(r['Email']!)).length).toBeGreaterThan(0);

        const plan = await verifyEmailsFile({ ...base, runsDir, dryRun: true });
        const resumed = await verifyEmailsFile({ ...base, runsDir });
        expect(resumed.exitCode).toBe(0);
        expect(resumed.unconfirmed).toBe(0);
        expect(plan).toMatchObject({ sent: resumed.sent });
        const last = await readOutput(output);
        expect(last).toHaveLength(ADDRESSES);
        const byId = new Map(last.map((r) => [r['Id'], r]));
        for (const r of paid) {
          expect(byId.get(r['Id'])).toMatchObject({
            enrich_status: r['enrich_status'],
            verify_status: r['verify_status'],
            verify_credit_charged: 'true',
          });
        }
        // Each address paid for once: what the output says was charged is what the service charged.
        const charged = last.filter((r) => r['verify_credit_charged'] === 'true').length;
        expect(charged).toBe(ADDRESSES);
        expect(s.admin.stats().verification_credits_charged).toBe(ADDRESSES);
      },
    );
  },
);
