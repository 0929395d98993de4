import { randomUUID } from 'node:crypto';
import { Limits } from '../contract/index.js';
import type { Reply, SandboxContext } from './context.js';
import { errorBody } from './http.js';
import { generateCompanies, generateContacts } from './generate.js';
import type { CompanyInput } from './generate.js';
import type { ContactInput } from './generate-contact.js';
import { bodyHash } from './canonical.js';
import type { Account, Job } from './store.js';
import { specOnlyRecords } from './spec-only.js';
import { quotaBeforeSubmit, quotaForJob } from './quota.js';
import { jobDuration, jobProcessed, jobStart } from './schedule.js';

type Raw = Record<string, unknown>;

/**
 * Creates a bulk job: records are generated and credits charged now, in submission order.
 * A repeated Idempotency-Key with the same body replays the job; with another body, 422.
 * The answer is built per reply (see jobAnswer), never stored: a replay reports the balance
 * now and the download_url of the address the sandbox answers on now.
 */
export function submitBulk(
  ctx: SandboxContext,
  account: Account,
  kind: Job['kind'],
  body: Raw,
  idempotencyKey: string | undefined,
  baseUrl: string = ctx.baseUrl,
): Reply {
  ctx.store.purgeExpired(ctx.now());
  const hash = idempotencyKey === undefined ? undefined : bodyHash(body);
  if (idempotencyKey !== undefined) {
    const prior = ctx.store.jobForIdempotencyKey(account.id, kind, idempotencyKey);
    if (prior) {
      if (prior.idempotency?.body_hash === hash) return accepted(ctx, prior, baseUrl, account);
      return {
        status: 422,
        body: errorBody(
          422,
          `Idempotency-Key "${idempotencyKey}" was already used for a different request body (job ${prior.id})`,
        ),
      };
    }
  }
  const full = quotaBeforeSubmit(ctx, account);
  if (full) return full;
  const meta = (body.metadata ?? {}) as Raw;
  const seed = ctx.options.seed;
  const items = body[kind] as Raw[];
  const { records, charged } =
    kind === 'contacts'
      ? generateContacts(items as ContactInput[], {
          seed,
          credits: account.credits,
          mobile: meta.mobile_phone_enrichment === true,
          requireEmail: meta.business_email_exists === true,
          requireMobile: meta.mobile_phone_exists === true,
          leaveOutFiltered: true,
        })
      : generateCompanies(items as CompanyInput[], {
          seed,
          credits: account.credits,
          topMatches: (meta.top_matches_returned as number | undefined) ?? Limits.topMatchesDefault,
        });
  // Serialised before anything is charged: records that cannot be written (a 500) cost nothing.
  const results = JSON.stringify(ctx.options.specOnly ? specOnlyBulkRecords(records) : records);
  const now = ctx.now();
  const id = randomUUID();
  // Jobs past the account's parallel limit wait their turn; their results live as long.
  const start = jobStart(jobsOf(ctx, account), now, ctx.options.parallelJobs);
  const job: Job = {
    id,
    kind,
    account_id: account.id,
    created_at: now,
    ...(start > now ? { started_at: start } : {}),
    ready_at: start + jobDuration(ctx.options, items.length),
    expires_at: start + ctx.options.ttlMs,
    total: items.length,
    records: records.length,
    charged,
    results,
    idempotency:
      idempotencyKey === undefined ? undefined : { key: idempotencyKey, body_hash: hash as string },
  };
  const over = quotaForJob(ctx, account, job);
  if (over) return over;
  const reply = accepted(ctx, job, baseUrl, account, charged);
  ctx.store.addJob(job, charged);
  ctx.stats.jobs_submitted++;
  ctx.stats.records_submitted += items.length;
  ctx.stats.credits_charged += charged;
  return reply;
}

/** The account's stored jobs (their timeline decides when a new one starts). */
function* jobsOf(ctx: SandboxContext, account: Account): Iterable<Job> {
  for (const j of ctx.store.jobs.values()) if (j.account_id === account.id) yield j;
}

/**
 * The 200 of a bulk submission (api-spec.md 2.3), plus the account's `remaining_credits` at
 * answer time (section 4), after `pending` credits are taken. The default mode echoes an honoured
 * Idempotency-Key (as Stripe does): that is how a client learns a service honours keys.
 */
function accepted(
  ctx: SandboxContext,
  job: Job,
  baseUrl: string,
  account: Account,
  pending = 0,
): Reply {
  // Seconds, rounded down: a client never believes results live longer than they do.
  const seconds = Math.floor(job.expires_at / 1000);
  const key = job.idempotency?.key;
  return {
    status: 200,
    headers: key !== undefined && !ctx.options.specOnly ? { 'Idempotency-Key': key } : {},
    body: {
      job_id: job.id,
      download_url: `${baseUrl}/${job.kind}/results/${job.id}.json`,
      // The spec declares a string; the default mode sends the sample's integer.
      expiration_date: ctx.options.specOnly ? String(seconds) : seconds,
      remaining_credits: account.credits - pending,
    },
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Answers a results download: 202 while processing, 200 when done, 404 when unknown, foreign
 * or expired. Both the 200 and the 202 carry `remaining_credits`.
 */
export function jobResults(
  ctx: SandboxContext,
  account: Account,
  kind: Job['kind'],
  jobId: string,
): Reply {
  if (!UUID.test(jobId)) {
    const message = `job_id: expected a UUID, got "${jobId.slice(0, 80)}"`;
    return {
      status: 400,
      body: errorBody(400, message, { errors: [{ path: 'job_id', message }] }),
    };
  }
  const now = ctx.now();
  ctx.store.purgeExpired(now);
  const job = ctx.store.jobs.get(jobId);
  if (!job || job.account_id !== account.id || job.kind !== kind) {
    return {
      status: 404,
      body: errorBody(
        404,
        `Job ${jobId} not found: unknown, expired (results deleted) or not this account's`,
      ),
    };
  }
  if (now < job.ready_at) {
    const left = job.ready_at - now;
    return {
      status: 202,
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(left / 1000))) },
      body: {
        status: 'processing',
        processed: jobProcessed(job, now),
        total: job.total,
        remaining_credits: account.credits,
      },
    };
  }
  const tail = `,"remaining_credits":${account.credits}}`;
  const f = ctx.faults;
  const drop =
    f.drop_custom_fields === true
      ? 1
      : typeof f.drop_custom_fields === 'number'
        ? f.drop_custom_fields
        : 0;
  const lose = f.drop_records ?? 0;
  if (!f.shuffle_results && drop === 0 && lose === 0) {
    return { status: 200, body: `{"${kind}":${job.results}${tail}` };
  }
  // Faults change what comes back: only then are the records objects again.
  let records = JSON.parse(job.results) as unknown[];
  if (lose > 0) records = records.filter(() => ctx.random() >= lose);
  if (f.shuffle_results) shuffle(records, ctx.random);
  if (drop > 0) records = records.map((r) => (ctx.random() < drop ? withoutCustomFields(r) : r));
  return { status: 200, body: `{"${kind}":${JSON.stringify(records)}${tail}` };
}

/**
 * Bulk results as a service that keeps only the spec may give them: reworded, and every third
 * record without `custom_fields` (optional in bulk results, api-spec.md 2.1): a client finds
 * its row by the `original_fields` echo then.
 */
function specOnlyBulkRecords<R extends object>(records: R[]): R[] {
  return specOnlyRecords(records).map((r, i) => (i % 3 === 2 ? (withoutCustomFields(r) as R) : r));
}

function withoutCustomFields(record: unknown): unknown {
  const copy = { ...(record as Raw) };
  delete copy.custom_fields;
  return copy;
}

function shuffle<T>(items: T[], random: () => number): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
}
