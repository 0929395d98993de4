import { z } from 'zod';
import { EnrichError } from '../errors.js';
import type { SandboxContext } from './context.js';
import { faultProblems } from './faults.js';
import type { AccountUpdate, AccountView, Faults, SandboxAdmin } from './types.js';

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** The farthest the admin clock moves in one step, and the farthest its offset goes (10 years). */
export const MAX_CLOCK_SHIFT_MS = 10 * 365 * 24 * 3_600_000;
/** Bodies of the admin API (strict: a typo is an error, not a silent no-op). */
export const adminSchemas = {
  createAccount: z.strictObject({
    credits: count.optional(),
    verification_credits: count.optional(),
  }),
  updateAccount: z.strictObject({
    credits: count.optional(),
    verification_credits: count.optional(),
    suspended: z.boolean().optional(),
  }),
  createKey: z.strictObject({
    name: z.string().max(255).optional(),
    description: z.string().max(1000).optional(),
    account_id: z.string().optional(),
  }),
  clock: z.strictObject({
    advance_ms: z.number().int().min(-MAX_CLOCK_SHIFT_MS).max(MAX_CLOCK_SHIFT_MS),
  }),
};

/**
 * Why moving the clock by `ms` is refused, or undefined: an advance must be a whole number of
 * ms within 10 years, keep the offset within 10 years and the clock at or after epoch 0 (a
 * clock Date cannot show would break every answer that carries a time).
 */
export function clockProblem(now: number, offset: number, ms: number): string | undefined {
  const max = MAX_CLOCK_SHIFT_MS;
  if (!Number.isSafeInteger(ms) || Math.abs(ms) > max)
    return `advance_ms: expected a whole number of ms between -${max} and ${max} (10 years), got ${ms}`;
  if (Math.abs(offset + ms) > max)
    return `advance_ms: the clock would move ${offset + ms} ms from the real time, more than 10 years (${max} ms)`;
  if (now + ms < 0)
    return `advance_ms: the clock would go below 0 (epoch ms ${now + ms}); advance by at least ${-now}`;
  return undefined;
}

/** The clock offset of a saved state, or 0 when it is not one the admin API could have set. */
export function usableClockOffset(offset: unknown): number {
  return typeof offset === 'number' &&
    Number.isSafeInteger(offset) &&
    Math.abs(offset) <= MAX_CLOCK_SHIFT_MS
    ? offset
    : 0;
}

const accountView = (a: {
  id: string;
  credits: number;
  verification_credits: number;
  suspended: boolean;
}): AccountView => ({
  account_id: a.id,
  credits: a.credits,
  verification_credits: a.verification_credits,
  suspended: a.suspended,
});

function notFound(what: string, id: string): EnrichError {
  return new EnrichError('API_NOT_FOUND', `${what} ${id} not found`);
}

/** Builds the in-process admin operations over a sandbox context (the HTTP admin API calls these). */
export function createAdmin(ctx: SandboxContext): SandboxAdmin {
  const { store } = ctx;
  return {
    createAccount(o = {}) {
      const acc = store.createAccount(
        o.credits ?? ctx.options.credits,
        o.verification_credits ?? ctx.options.verificationCredits,
      );
      const { key } = store.createKey(acc.id, 'default', '', ctx.now());
      return { account_id: acc.id, api_key: key };
    },
    createKey(o = {}) {
      const accountId = o.account_id ?? ctx.firstAccountId;
      if (!store.accounts.has(accountId)) throw notFound('Account', accountId);
      const name = o.name ?? `key-${store.keys.size + 1}`;
      const { record, key } = store.createKey(accountId, name, o.description ?? '', ctx.now());
      return { id: record.id, api_key: key, name: record.name };
    },
    listKeys: () => store.listKeys(),
    revokeKey: (id) => store.revokeKey(id),
    updateAccount(id: string, o: AccountUpdate) {
      if (!store.updateAccount(id, o)) throw notFound('Account', id);
    },
    getAccount(id) {
      const a = store.accounts.get(id);
      return a && accountView(a);
    },
    listAccounts: () => [...store.accounts.values()].map(accountView),
    advanceClock(ms: number) {
      const problem = clockProblem(ctx.now(), store.clockOffset, ms);
      if (problem) throw new EnrichError('USAGE', problem);
      store.setClockOffset(store.clockOffset + ms);
    },
    setFaults(f: Faults) {
      const problems = faultProblems(f);
      if (problems.length) throw new EnrichError('USAGE', `faults: ${problems.join('; ')}`);
      // A copy: the `next` queue is consumed in place.
      ctx.faults = structuredClone(f);
    },
    getFaults: () => structuredClone(ctx.faults),
    stats: () => structuredClone(ctx.stats),
  };
}
