import type { z } from 'zod';
import { ApiError } from '../errors.js';
import type { BulkKind } from '../contract/paths.js';
import { echoesKey, idempotencyScope, type IdempotencyStore } from './idempotency.js';
import { parseBody } from './parse-body.js';
import { pendingProgressOf } from './results-check.js';
import { joinBasePath, resolveResultsTarget } from './results-path.js';
import { parseRetryAfter } from './retry.js';
import { sendWithRetry, type AttemptHooks, type SendContext, type SendOptions } from './send.js';
import { checkVerificationAnswer } from './single-answer.js';
import type { Exchange, RawResponse } from './transport.js';

/** A `remaining_credits` the service reported: which balance, how many, when (epoch ms). */
export interface CreditsSeen {
  kind: 'enrichment' | 'verification';
  remaining: number;
  at: number;
}

/** How a POST is sent: its Idempotency-Key, whether it is a bulk submission, its deadline. */
export interface PostOptions {
  key: string;
  bulk: boolean;
  deadline?: number | undefined;
  /** Ends the call's waits, not an attempt on its way (SendOptions.stop). */
  stop?: AbortSignal | undefined;
  /** Told of each attempt (SendOptions.hooks). */
  hooks?: AttemptHooks | undefined;
  /** POST /email-verification: an in-band error is read before the schema. */
  verification?: boolean;
}

/** What the calls share with the client that built them. */
export interface CallsInit {
  ctx: SendContext;
  base: URL;
  store: IdempotencyStore;
  /** The key's account (`accountOfKey`): lessons about Idempotency-Key are kept per account. */
  account: string;
  headers: Record<string, string>;
  onCredits?: ((seen: CreditsSeen) => void) | undefined;
}

/** How sendWithRetry sends a call, from the call's options. */
function sendOptions(
  opts: Pick<PostOptions, 'deadline' | 'stop' | 'hooks'>,
  repeatable: boolean,
): SendOptions {
  return { repeatable, deadline: opts.deadline, stop: opts.stop, hooks: opts.hooks };
}

/** The raw POST and results calls of one client. */
export function createCalls(init: CallsInit) {
  const { ctx, base, store, headers } = init;
  const report = (kind: CreditsSeen['kind'], data: unknown) => {
    const n = (data as { remaining_credits?: unknown } | null)?.remaining_credits;
    if (typeof n === 'number' && Number.isFinite(n)) {
      init.onCredits?.({ kind, remaining: n, at: ctx.clock.now() });
    }
  };

  /** Learns from an accepted POST whether its endpoint honours Idempotency-Key. */
  const learn = (scope: string, raw: RawResponse, opts: PostOptions) => {
    if (echoesKey(raw.headers, opts.key)) store.set(scope, true);
    // Only a bulk answer may teach "no": a service may de-duplicate submissions only.
    else if (opts.bulk) store.set(scope, false);
  };

  const post = async <S extends z.ZodType>(
    endpoint: string,
    body: unknown,
    schema: () => Promise<S>,
    opts: PostOptions,
    accepts?: (json: unknown) => boolean,
  ): Promise<z.infer<S>> => {
    const scope = idempotencyScope(base, endpoint, init.account);
    const ex: Exchange = {
      method: 'POST',
      label: endpoint,
      path: joinBasePath(base, endpoint),
      headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': opts.key },
      body: JSON.stringify(body),
    };
    const honoured = store.get(scope) === true;
    const raw = await sendWithRetry(ctx, ex, sendOptions(opts, honoured));
    learn(scope, raw, opts);
    if (opts.verification) checkVerificationAnswer(ex, raw);
    let data: z.infer<S>;
    try {
      data = await parseBody(raw, ex, schema, accepts);
    } catch (err) {
      // Accepted and unreadable: it was processed (and maybe charged) all the same.
      if (err instanceof ApiError && !honoured) throw unreadable(ex, err);
      throw err;
    }
    report(opts.verification ? 'verification' : 'enrichment', data);
    return data;
  };

  const results = async <S extends z.ZodType>(
    kind: BulkKind,
    jobId: string,
    schema: () => Promise<S>,
    pick: (data: z.infer<S>) => unknown[],
    opts: {
      downloadUrl?: string | undefined;
      deadline?: number | undefined;
      stop?: AbortSignal | undefined;
    },
    accepts?: (json: unknown) => boolean,
  ) => {
    const target = resolveResultsTarget(base, kind, jobId, opts.downloadUrl);
    if (target.ignoredForeign) {
      ctx.debug?.(`download_url of job ${jobId} is on another origin; using ${target.label}`);
    }
    const ex: Exchange = { method: 'GET', label: target.label, path: target.path, headers };
    const raw = await sendWithRetry(ctx, ex, sendOptions(opts, true));
    if (raw.status === 202) return pending(raw, ctx.clock.now());
    const data = await parseBody(raw, ex, schema, accepts);
    report('enrichment', data);
    const done = {
      state: 'done' as const,
      records: pick(data),
      remainingCredits: (data as { remaining_credits: number }).remaining_credits,
    };
    // The body the records came from, as it came (the key masked), so the bulk run can spool
    // it without stringifying and encoding again. Not enumerable: a wrapper that rebuilds the
    // answer ({...answer, records}) drops it, and the run then spools the records it was given.
    Object.defineProperty(done, 'body', { value: raw.bytes, enumerable: false });
    return done;
  };

  return { post, results };
}

/** The pending state of a 202, with the Retry-After and progress it carries, if any. */
function pending(raw: RawResponse, now: number) {
  let progress: { processed?: number; total?: number } = {};
  try {
    progress = pendingProgressOf(JSON.parse(raw.text));
  } catch {
    // The spec does not show a 202 body; none, or any, is fine.
  }
  const retryAfterMs = parseRetryAfter(raw.headers['retry-after'], now);
  return {
    state: 'pending' as const,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(progress.processed !== undefined ? { processed: progress.processed } : {}),
    ...(progress.total !== undefined ? { total: progress.total } : {}),
  };
}

function unreadable(ex: Exchange, err: ApiError): ApiError {
  return new ApiError('UNCONFIRMED', {
    status: err.status,
    method: ex.method,
    path: ex.label,
    message: `${err.message}; the service accepted the request and may have charged it, but its answer cannot be read`,
    cause: err,
  });
}
