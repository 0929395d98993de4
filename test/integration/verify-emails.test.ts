import { appendFile, copyFile, readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { verifyEmailsFile, type EnrichClient, type VerifyEmailsOptions } from '../../src/index.js';
import { toVerifyApi } from '../../src/bulk/verify-emails.js';
import type { VerifyApi } from '../../src/pipeline/verify/types.js';
import { fastClient, parseCsv, sandboxPerTest, tempDir, writeCsv } from './bulk-harness.js';
import { flushedTo, watchFlushSpans } from '../helpers/flushes.js';

const sandbox = sandboxPerTest();
const clients: EnrichClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

const HEADER = ['Id', 'Name', 'Work Email', 'Notes'];

/**
 * `n` rows: most hold a distinct address, every 5th repeats the one before it with the domain
 * upper-cased (a duplicate), every 7th is `invalid…`/every 11th `unknown…` (the sandbox's magic
 * verdicts), every 13th holds no address and every 17th something that is not one.
 */
function rows(n: number, from = 0): string[][] {
  const out: string[][] = [];
  for (let i = from; i < from + n; i++) {
    let email = `person${i}@company${i % 31}.com`;
    if (i % 5 === 4) email = `person${i - 1}@COMPANY${(i - 1) % 31}.COM`;
    else if (i % 7 === 0) email = `invalid${i}@company${i % 31}.com`;
    else if (i % 11 === 0) email = `unknown${i}@company${i % 31}.com`;
    if (i % 13 === 12) email = '';
    if (i % 17 === 16) email = `person${i} at company.com`;
    out.push([`R${i}`, `Name ${i}`, email, `note ${i}`]);
  }
  return out;
}

async function rig(o: { n?: number; specOnly?: boolean; verificationCredits?: number } = {}) {
  const s = await sandbox({
    specOnly: o.specOnly === true,
    ...(o.verificationCredits !== undefined ? { verificationCredits: o.verificationCredits } : {}),
  });
  const dir = await tempDir('enrich-verify-');
  const client = fastClient(s);
  clients.push(client);
  const options: VerifyEmailsOptions & { output: string } = {
    input: await writeCsv(dir, 'list.csv', HEADER, rows(o.n ?? 120)),
    output: join(dir, 'verified.csv'),
    service: { client, baseUrl: s.url },
    runsDir: join(dir, 'runs'),
    cacheDir: join(dir, 'cache'),
    concurrency: 4,
  };
  return { s, dir, client, options };
}

/** The output as objects by column name. */
async function readOutput(path: string): Promise<Record<string, string>[]> {
  const [header, ...body] = parseCsv(await readFile(path, 'utf8'));
  return body.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i] ?? ''])));
}

const canonical = (e: string) => e.replace(/@(.*)$/, (_, d: string) => `@${d.toLowerCase()}`);

describe.each([
  ['default', false],
  ['--spec-only', true],
])('verifyEmailsFile against the %s sandbox', (_mode, specOnly) => {
  it('verifies each distinct address once, fans its verdict out, and charges only the distinct valid addresses', async () => {
    const { s, options, client } = await rig({ specOnly });
    const summary = await verifyEmailsFile(options);
    expect(summary.exitCode).toBe(0);
    const out = await readOutput(options.output);
    expect(out).toHaveLength(120);
    expect(out.map((r) => r.Id)).toEqual(rows(120).map((r) => r[0]));

    const sendable = out.filter((r) => /^[^ ]+@[^ ]+\.[a-z]+$/i.test(r['Work Email']!));
    const distinct = new Set(sendable.map((r) => canonical(r['Work Email']!)));
    expect(summary.sent).toBe(distinct.size);
    expect(summary.addresses).toBe(distinct.size);
    expect(summary.duplicates).toBe(sendable.length - distinct.size);
    // The sandbox charges valid and invalid verdicts, not unknown ones.
    const chargeable = [...distinct].filter((e) => !e.startsWith('unknown')).length;
    expect(s.admin.stats().verification_credits_charged).toBe(chargeable);
    expect(summary.creditsCharged).toBe(chargeable);
    expect(out.filter((r) => r.verify_credit_charged === 'true')).toHaveLength(chargeable);

    // Row for row, the verdict is what a single verification of that address answers.
    for (const r of sendable) {
      const single = await client.verifyEmail(r['Work Email']!);
      expect(r.verify_status).toBe(single.status);
      expect(r.enrich_status).toBe('enriched');
    }
    const empty = out.find((r) => r['Work Email'] === '')!;
    expect([empty.enrich_status, empty.verify_status]).toEqual(['invalid', '']);
    const bad = out.find((r) => r['Work Email']!.includes(' at '))!;
    expect([bad.enrich_status, bad.verify_status]).toEqual(['invalid', 'invalid']);
    expect(bad.enrich_error).toMatch(/not an email address.*not sent/);
  });

  it('running out of verification credits mid-file exits 5; after a top-up the same call verifies only the rest', async () => {
    const { s, options } = await rig({ specOnly, verificationCredits: 20 });
    const first = await verifyEmailsFile(options);
    expect(first.exitCode).toBe(5);
    expect(first.stopReason?.code).toBe('CREDITS_EXHAUSTED');
    expect(s.admin.stats().verification_credits_charged).toBe(20);
    const out = await readOutput(options.output);
    const failed = out.filter((r) => r.enrich_status === 'failed');
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((r) => r.verify_credit_charged !== 'true')).toBe(true);

    s.admin.updateAccount(s.accountId, { verification_credits: 1000 });
    const second = await verifyEmailsFile(options);
    expect(second.exitCode).toBe(0);
    expect(second.resumed).toBe(true);
    expect(second.answeredEarlier).toBe(first.sent - first.failed);
    expect(second.sent).toBe(first.addresses - second.answeredEarlier);
    const all = await readOutput(options.output);
    expect(all.filter((r) => r.enrich_status === 'failed')).toHaveLength(0);
    // Every chargeable address was charged once in all.
    const distinct = new Set(
      all.filter((r) => r.enrich_status === 'enriched').map((r) => canonical(r['Work Email']!)),
    );
    const chargeable = [...distinct].filter((e) => !e.startsWith('unknown')).length;
    expect(s.admin.stats().verification_credits_charged).toBe(chargeable);
  });

  it('credits that run out with the last address end the run complete: exit 0, no stop', async () => {
    const { s, dir, options } = await rig({ specOnly, verificationCredits: 5 });
    const five = [0, 1, 2, 3, 4].map((i) => [`R${i}`, `Name ${i}`, `jane${i}@acme.com`, '']);
    const input = await writeCsv(dir, 'five.csv', HEADER, five);
    const summary = await verifyEmailsFile({ ...options, input, concurrency: 1 });
    expect(s.admin.stats().verification_credits_charged).toBe(5);
    expect(summary.remainingCredits).toBe(0);
    expect(summary.stopReason).toBeUndefined();
    expect(summary.notSent).toBe(0);
    expect(summary.exitCode).toBe(0);
  });

  it('a list that changes under the run stops it (INPUT_CHANGED), and the answers in flight are kept: the next run pays for no address twice (regression: they were lost)', async () => {
    const { s, dir, options } = await rig({ specOnly });
    s.admin.setFaults({ latency_ms: 30 });
    const paid = () => s.admin.stats().verification_credits_charged;
    const emails = Array.from({ length: 40 }, (_, i) => `lead${i}@firm${i % 7}.com`);
    const input = join(dir, 'grows.csv');
    await writeFile(input, `email\n${emails.join('\n')}\n`);
    const first = verifyEmailsFile({ ...options, input, concurrency: 2 });
    while (paid() < 4) await new Promise((r) => setTimeout(r, 5));
    await appendFile(input, 'new.lead@fresh.io\n');
    await expect(first).rejects.toMatchObject({ code: 'INPUT_CHANGED' });
    s.admin.setFaults({});
    const next = await verifyEmailsFile({ ...options, input });
    expect(next.exitCode).toBe(0);
    expect(paid()).toBe(41); // each address once
  });

  it('an answer lost after the service charged it is not sent again by itself; resendUnconfirmed sends it', async () => {
    const { s, options } = await rig({ specOnly, n: 20 });
    s.admin.setFaults({ next: [{ reset: true, after: true, path: '/email-verification' }] });
    const first = await verifyEmailsFile({ ...options, concurrency: 1 });
    expect(first.exitCode).toBe(3);
    expect(first.unconfirmed).toBe(1);
    const out = await readOutput(options.output);
    const lost = out.filter((r) => r.verify_credit_charged === 'unknown');
    expect(lost).toHaveLength(1);
    expect(lost[0]!.enrich_error).toMatch(/may have .*charged/);
    const charged = s.admin.stats().verification_credits_charged;

    // The dry run plans what the resume does (regression: it planned every address sent).
    const plan = await verifyEmailsFile({ ...options, dryRun: true });
    expect(plan).toMatchObject({ sent: 0, maxCredits: 0 });
    const answered = plan.addresses - 1;
    expect(plan.resume).toEqual({
      startedAt: expect.any(Number) as number,
      finished: false,
      answered,
      unconfirmed: 1,
      refused: 0,
    });
    const asked = await verifyEmailsFile({ ...options, dryRun: true, resendUnconfirmed: true });
    expect(asked).toMatchObject({ sent: 1, maxCredits: 1, resume: { answered, unconfirmed: 0 } });

    const again = await verifyEmailsFile(options);
    expect(again.sent).toBe(0);
    expect(again.unconfirmed).toBe(1);
    expect(again.exitCode).toBe(3);
    expect(s.admin.stats().verification_credits_charged).toBe(charged);

    // Another list with the same addresses (another run) does not send it by itself either
    // (regression: it was sent, and paid for, again); its dry run says so.
    const other = join(dirname(options.input as string), 'copy.csv');
    await copyFile(options.input as string, other);
    const copyOptions = { ...options, input: other, output: `${other}.out.csv` };
    const copyPlan = await verifyEmailsFile({ ...copyOptions, dryRun: true });
    expect(copyPlan).toMatchObject({ unconfirmedEarlier: 1, sent: 0, cached: answered });
    const copy = await verifyEmailsFile(copyOptions);
    expect(copy).toMatchObject({ sent: 0, unconfirmed: 1, exitCode: 3 });
    const copyOut = await readOutput(copyOptions.output);
    expect(
      copyOut.filter((r) => /^not sent: an enrich run sent this row at/.test(r.enrich_error!)),
    ).toHaveLength(1);
    expect(s.admin.stats().verification_credits_charged).toBe(charged);

    const resent = await verifyEmailsFile({ ...options, resendUnconfirmed: true });
    expect(resent.sent).toBe(1);
    expect(resent.exitCode).toBe(0);
  });
});

/** A first run of `options` that journals its first address sent, then dies before the answer. */
async function dies(options: VerifyEmailsOptions, client: EnrichClient, url: string) {
  let calls = 0;
  const real = toVerifyApi(client);
  const dying = Object.assign(
    async (address: string, how?: Parameters<VerifyApi['verify']>[1]) => {
      if (calls++ === 0) {
        await how?.hooks?.sending();
        throw new Error('the process died here');
      }
      return real.verify(address, how);
    },
    { journalsAttempts: true },
  );
  const service = { api: { verify: dying }, baseUrl: url, account: client.account };
  await expect(verifyEmailsFile({ ...options, concurrency: 1, service })).rejects.toThrow();
}

describe('verifyEmailsFile: an attempt that died with a request on the wire', () => {
  it('its resume marks the address as sent without an answer: a run of another list does not send it either (regression: verified and paid again)', async () => {
    const { s, dir, options, client } = await rig({ n: 6 });
    // The first request is journaled as sent, then the process "dies" (a bug ends the run).
    await dies(options, client, s.url);
    const resumed = await verifyEmailsFile({ ...options, concurrency: 1 });
    expect(resumed).toMatchObject({ unconfirmed: 1, exitCode: 3 });
    const charged = s.admin.stats().verification_credits_charged;

    const other = await writeCsv(dir, 'other.csv', HEADER, rows(6));
    const copy = await verifyEmailsFile({ ...options, input: other, output: `${other}.out.csv` });
    expect(copy).toMatchObject({ sent: 0, unconfirmed: 1, exitCode: 3 });
    expect(s.admin.stats().verification_credits_charged).toBe(charged);
  });
});

/** The journal file under `runsDir` (a run's only one). */
async function journalIn(runsDir: string): Promise<string> {
  const found = (await readdir(runsDir, { recursive: true })).filter((f) =>
    f.endsWith('journal.jsonl'),
  );
  expect(found).toHaveLength(1);
  return join(runsDir, found[0]!);
}

describe.each([
  ['default', false],
  ['--spec-only', true],
])('verifyEmailsFile against the %s sandbox: a power cut', (_m, specOnly) => {
  it.each([
    ['a transport that journals each attempt', true],
    ['one that does not', false],
  ])(
    'finds each address sent on the disk, its vsend line flushed before its request (%s; regression: not flushed, a power cut lost up to --concurrency of them and they were paid again)',
    async (_t, attempts) => {
      const { s, options, client } = await rig({ n: 60, specOnly });
      const real = toVerifyApi(client);
      const spans = await watchFlushSpans();
      const unflushed: string[] = [];
      let checked = 0;
      const onWire = async (address: string) => {
        const journal = await journalIn(options.runsDir!);
        const text = await readFile(journal, 'utf8');
        const line = `{"t":"vsend","addr":${JSON.stringify(address)}`;
        const at = text.indexOf(line);
        expect(at).toBeGreaterThanOrEqual(0);
        const end = Buffer.byteLength(text.slice(0, text.indexOf('\n', at) + 1));
        checked++;
        if (!flushedTo(spans, journal, end)) unflushed.push(address);
      };
      const verify: VerifyApi['verify'] = async (address, how = {}) => {
        if (!attempts) {
          await onWire(address);
          return real.verify(address, how);
        }
        const hooks = how.hooks!;
        const sending = async () => {
          await hooks.sending();
          await onWire(address);
        };
        return real.verify(address, { ...how, hooks: { ...hooks, sending } });
      };
      const api = { verify: Object.assign(verify, { journalsAttempts: attempts }) };
      const service = { api, baseUrl: s.url, account: client.account };
      const summary = await verifyEmailsFile({ ...options, concurrency: 8, service });
      vi.restoreAllMocks();
      expect(summary.exitCode).toBe(0);
      expect(summary.sent).toBeGreaterThan(30);
      expect(checked).toBeGreaterThanOrEqual(summary.sent);
      expect(unflushed).toEqual([]);
    },
  );
});

describe.each([
  ['default', false],
  ['--spec-only', true],
])(
  'verifyEmailsFile against the %s sandbox: a run that died with a request on the wire',
  (_m, specOnly) => {
    it('a run of another list, before the dead one is resumed, does not send that address either; its dry run says so (regression: verified and paid again)', async () => {
      const { s, dir, options, client } = await rig({ n: 6, specOnly });
      await dies(options, client, s.url);
      const charged = s.admin.stats().verification_credits_charged;
      const other = await writeCsv(dir, 'other.csv', HEADER, rows(8));
      const theirs = { ...options, input: other, output: `${other}.out.csv` };
      const plan = await verifyEmailsFile({ ...theirs, dryRun: true });
      expect(plan).toMatchObject({ unconfirmedEarlier: 1, sent: plan.addresses - 1 });
      const copy = await verifyEmailsFile(theirs);
      expect(copy).toMatchObject({ sent: plan.sent, unconfirmed: 1, exitCode: 3 });
      expect(s.admin.stats().verification_credits_charged).toBe(charged + plan.sent);
      const out = await readOutput(theirs.output);
      const first = out.find((r) => r['Id'] === 'R0')!;
      expect(first['enrich_status']).toBe('failed');
      expect(first['enrich_error']).toMatch(
        /an enrich run sent this row at \S+Z and its answer never came/,
      );

      // The dead run's own resume does not send it either; asked to, a run sends it once more.
      expect(await verifyEmailsFile({ ...options, concurrency: 1 })).toMatchObject({
        unconfirmed: 1,
        exitCode: 3,
      });
      const resent = await verifyEmailsFile({ ...theirs, resendUnconfirmed: true });
      expect(resent).toMatchObject({ sent: 1, exitCode: 0 });
    });

    it('a run that neither reads nor writes the cache marks nothing, and sends it (--no-cache: asked not to use the cache)', async () => {
      const { s, dir, options, client } = await rig({ n: 6, specOnly });
      await dies(options, client, s.url);
      const other = await writeCsv(dir, 'other.csv', HEADER, rows(6));
      const copy = await verifyEmailsFile({
        ...options,
        input: other,
        output: `${other}.out.csv`,
        cache: false,
      });
      expect(copy).toMatchObject({ unconfirmed: 0, exitCode: 0 });
      expect(copy.sent).toBe(copy.addresses);
    });
  },
);

describe('verifyEmailsFile: cache, budget and rate limits', () => {
  it('another file with the same addresses is answered from the results cache, paying nothing', async () => {
    const { s, dir, options } = await rig({ n: 40 });
    const first = await verifyEmailsFile(options);
    const charged = s.admin.stats().verification_credits_charged;
    expect(first.cacheHits).toBe(0);
    const other = await writeCsv(
      dir,
      'other.csv',
      ['Email', 'Id'],
      rows(40).map((r) => [r[2]!, r[0]!]),
    );
    const second = await verifyEmailsFile({
      ...options,
      input: other,
      output: join(dir, 'o2.csv'),
    });
    expect(second.sent).toBe(0);
    expect(second.cacheHits).toBe(first.addresses);
    expect(second.creditsSaved).toBe(charged);
    expect(s.admin.stats().verification_credits_charged).toBe(charged);
    const out = await readOutput(join(dir, 'o2.csv'));
    const answered = out.filter((r) => r.enrich_status === 'enriched');
    expect(
      answered.every((r) => r.enrich_cached_at !== '' && r.verify_credit_charged === 'false'),
    ).toBe(true);

    const refreshed = await verifyEmailsFile({
      ...options,
      input: other,
      output: join(dir, 'o3.csv'),
      refresh: true,
    });
    expect(refreshed.sent).toBe(first.addresses);
  });

  it.each([
    ['default', false],
    ['--spec-only', true],
  ])(
    'a second refresh of the same file verifies every address again; a refresh stopped by maxCredits is resumed, paying nothing twice (%s; regression: the finished refresh was resumed)',
    async (_mode, specOnly) => {
      const { s, options } = await rig({ specOnly, n: 40 });
      const paid = () => s.admin.stats().verification_credits_charged;
      const capped = await verifyEmailsFile({ ...options, refresh: true, maxCredits: 10 });
      expect([capped.exitCode, capped.sent]).toEqual([5, 10]);
      const rest = await verifyEmailsFile({ ...options, refresh: true });
      expect([rest.exitCode, rest.resumed, rest.answeredEarlier]).toEqual([0, true, 10]);
      const once = paid();
      const again = await verifyEmailsFile({ ...options, refresh: true });
      expect([again.resumed, again.answeredEarlier, again.sent]).toEqual([
        false,
        0,
        rest.addresses,
      ]);
      expect(paid()).toBe(2 * once);
    },
  );

  it('verifying a verified file again replaces its verify_* columns (regression: they were written twice); a column of its own by that name is refused', async () => {
    const { dir, options } = await rig({ n: 20 });
    await verifyEmailsFile(options);
    const again = join(dir, 'again.csv');
    const second = await verifyEmailsFile({ ...options, input: options.output, output: again });
    expect(second.exitCode).toBe(0);
    expect(second.sent).toBe(0); // the results cache answers
    const [header] = parseCsv(await readFile(again, 'utf8'));
    expect(header).toEqual([
      ...HEADER,
      'enrich_status',
      'enrich_error',
      'enrich_credit_charged',
      'enrich_cached_at',
      'verify_status',
      'verify_credit_charged',
    ]);
    const mine = await writeCsv(dir, 'mine.csv', ['Email', 'verify_status'], [['a@b.co', 'ok']]);
    await expect(
      verifyEmailsFile({ ...options, input: mine, output: join(dir, 'm.csv') }),
    ).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringContaining('a column named "verify_status", which this run writes too'),
    });
  });

  it('maxCredits caps the verifications sent; the rest are failed, not sent, exit 5', async () => {
    const { s, options } = await rig({ n: 60 });
    // The dry run under the same limit plans what the run then does.
    const plan = await verifyEmailsFile({ ...options, maxCredits: 10, dryRun: true });
    expect(plan).toMatchObject({ sent: 10, maxCredits: 10 });
    const summary = await verifyEmailsFile({ ...options, maxCredits: 10 });
    expect(summary.sent).toBe(10);
    expect(summary.exitCode).toBe(5);
    expect(summary.notSent).toBe(summary.addresses - 10);
    expect(s.admin.stats().requests_by_status['200']).toBe(10);
    const out = await readOutput(options.output);
    const notSent = out.filter((r) => r.enrich_error === 'not sent: maxCredits 10 reached');
    // One row per address not sent, plus its duplicates: the rows the plan said.
    expect(notSent.length).toBeGreaterThan(summary.notSent);
    expect(plan.overBudget).toBe(notSent.length);
    expect(
      notSent.every((r) => r.enrich_status === 'failed' && r.verify_credit_charged === ''),
    ).toBe(true);
  });

  it('429s slow the run down but never end it', async () => {
    const { s, options } = await rig({ n: 30 });
    s.admin.setFaults({
      next: Array.from({ length: 6 }, () => ({ status: 429, retry_after_s: 0 })),
    });
    const summary = await verifyEmailsFile(options);
    expect(summary.exitCode).toBe(0);
    expect(summary.sent).toBe(summary.addresses);
    expect(s.admin.stats().requests_by_status['429']).toBe(6);
  });

  it('an address a 429 kept from being processed is not counted sent (regression: sent 1)', async () => {
    const { s, options } = await rig({ n: 10 });
    // A wait past the run's time: the address is never processed, and the run stops.
    s.admin.setFaults({
      next: [{ status: 429, retry_after_s: 7200, path: '/email-verification' }],
    });
    const summary = await verifyEmailsFile({ ...options, concurrency: 1, timeoutMs: 60_000 });
    expect(summary.stopReason?.code).toBe('RATE_LIMITED');
    expect(s.admin.stats().requests_by_status['200'] ?? 0).toBe(0);
    expect(summary.sent).toBe(0);
    expect(s.admin.stats().verification_credits_charged).toBe(0);
  });

  it('a refused key stops the run at once: exit 4, nothing verified, the rows failed', async () => {
    const { s, options } = await rig({ n: 30 });
    const bad = fastClient(s, 'sk_sbx_not_a_key');
    clients.push(bad);
    const summary = await verifyEmailsFile({
      ...options,
      service: { client: bad, baseUrl: s.url },
    });
    expect(summary.exitCode).toBe(4);
    expect(summary.stopReason?.code).toBe('AUTH_INVALID');
    expect(summary.sent).toBeLessThanOrEqual(4);
    expect(summary.statuses.enriched).toBe(0);
    expect(s.admin.stats().verification_credits_charged).toBe(0);
  });

  it('an address the service refuses (400) is invalid, final, and the run goes on', async () => {
    const { s, options } = await rig({ n: 10 });
    s.admin.setFaults({ next: [{ status: 400, path: '/email-verification' }] });
    const summary = await verifyEmailsFile({ ...options, concurrency: 1 });
    expect(summary.exitCode).toBe(0);
    const refused = (await readOutput(options.output)).filter(
      (r) => r.enrich_status === 'invalid' && r.enrich_error!.includes('400'),
    );
    expect(refused).toHaveLength(1);
    const again = await verifyEmailsFile(options);
    expect(again.sent).toBe(0);
  });

  it('names the email column as told, and refuses a file without one in its own words', async () => {
    const { dir, options } = await rig({ n: 5 });
    const plain = await writeCsv(dir, 'no-email.csv', ['Id', 'Name'], [['1', 'Jane']]);
    await expect(
      verifyEmailsFile({ ...options, input: plain, dryRun: true }),
    ).rejects.toMatchObject({
      code: 'MAPPING_INVALID',
      message: expect.stringMatching(/no column of .* holds email addresses/),
      hint: expect.stringContaining('emailColumn: "Id"'),
    });
    const plan = await verifyEmailsFile({ ...options, emailColumn: 'Work Email', dryRun: true });
    expect(plan).toMatchObject({ column: 'Work Email', rows: 5, addresses: 4, maxCredits: 4 });
  });
});
