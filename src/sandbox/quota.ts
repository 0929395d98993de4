/**
 * Per-account caps on what the sandbox stores for bulk jobs (unexpired jobs, bytes of results,
 * bytes of results nobody paid for), so one tenant cannot exhaust its memory, least of all for
 * free. Over a cap the answer is 429 with Retry-After until the account's oldest job expires;
 * a job that could never fit under a cap on its own is a 413.
 */
import type { Reply, SandboxContext } from './context.js';
import { errorBody } from './http.js';
import { jobBytes, type Account, type Job } from './store.js';

const CODE = 'storage_quota_exceeded';

/** Refuses a submission before any work when the account is already at a cap (0 = no cap). */
export function quotaBeforeSubmit(ctx: SandboxContext, account: Account): Reply | undefined {
  const o = ctx.options;
  const u = ctx.store.usageOf(account.id);
  if (o.maxJobsPerAccount > 0 && u.jobs >= o.maxJobsPerAccount)
    return tooMany(ctx, account, `${u.jobs} unexpired jobs, at most ${o.maxJobsPerAccount}`);
  if (o.maxStoredBytesPerAccount > 0 && u.bytes >= o.maxStoredBytesPerAccount)
    return tooMany(ctx, account, storedText(u.bytes, o.maxStoredBytesPerAccount));
  if (o.maxUnpaidBytesPerAccount > 0 && u.unpaidBytes >= o.maxUnpaidBytesPerAccount)
    return tooMany(ctx, account, unpaidText(u.unpaidBytes, o.maxUnpaidBytesPerAccount));
  return undefined;
}

/** Refuses a job whose results would take its account past a cap (before anything is charged). */
export function quotaForJob(ctx: SandboxContext, account: Account, job: Job): Reply | undefined {
  const o = ctx.options;
  const u = ctx.store.usageOf(account.id);
  const { bytes, unpaidBytes } = jobBytes(job);
  const maxBytes = o.maxStoredBytesPerAccount;
  const maxUnpaid = o.maxUnpaidBytesPerAccount;
  if (maxBytes > 0 && bytes > maxBytes)
    return tooLarge(
      `the results of this job take ${bytes} bytes, more than the ${maxBytes} bytes an account may store`,
    );
  if (maxUnpaid > 0 && unpaidBytes > maxUnpaid)
    return tooLarge(
      `the results of this job no credit pays for take ${unpaidBytes} bytes, more than the ${maxUnpaid} bytes an account may store unpaid`,
    );
  if (maxBytes > 0 && u.bytes + bytes > maxBytes)
    return tooMany(ctx, account, storedText(u.bytes + bytes, maxBytes));
  if (maxUnpaid > 0 && u.unpaidBytes + unpaidBytes > maxUnpaid)
    return tooMany(ctx, account, unpaidText(u.unpaidBytes + unpaidBytes, maxUnpaid));
  return undefined;
}

function storedText(bytes: number, max: number): string {
  return `${bytes} bytes of stored results, at most ${max}`;
}

function unpaidText(bytes: number, max: number): string {
  return `${bytes} bytes of stored results no credit paid for (no match, out of credits), at most ${max}`;
}

function tooMany(ctx: SandboxContext, account: Account, what: string): Reply {
  const now = ctx.now();
  let first = Infinity;
  for (const job of ctx.store.jobs.values())
    if (job.account_id === account.id && job.expires_at < first) first = job.expires_at;
  const seconds = Number.isFinite(first) ? Math.max(1, Math.ceil((first - now) / 1000)) : 1;
  const when = Number.isFinite(first) ? new Date(first).toISOString() : 'now';
  return {
    status: 429,
    headers: { 'Retry-After': String(seconds) },
    body: errorBody(
      429,
      `Storage quota exceeded: account ${account.id} would keep ${what}; the oldest job's results expire at ${when}`,
      { code: CODE },
    ),
  };
}

function tooLarge(why: string): Reply {
  return {
    status: 413,
    body: errorBody(413, `Storage quota exceeded: ${why}; send fewer records per job`, {
      code: CODE,
    }),
  };
}
