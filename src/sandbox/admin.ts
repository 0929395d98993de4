import { z } from 'zod';
import { EnrichError } from '../errors.js';
import type { SandboxContext } from './context.js';
import { faultProblems } from './faults.js';
import type { AccountUpdate, Faults, SandboxAdmin } from './types.js';

const count = z.number().int().min(0);
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
  clock: z.strictObject({ advance_ms: z.number().finite() }),
};

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
      ctx.changed();
      return { account_id: acc.id, api_key: key };
    },
    createKey(o = {}) {
      const accountId = o.account_id ?? ctx.firstAccountId;
      if (!store.accounts.has(accountId)) throw notFound('Account', accountId);
      const name = o.name ?? `key-${store.keys.size + 1}`;
      const { record, key } = store.createKey(accountId, name, o.description ?? '', ctx.now());
      ctx.changed();
      return { id: record.id, api_key: key, name: record.name };
    },
    listKeys: () => store.listKeys(),
    revokeKey(id) {
      const ok = store.revokeKey(id);
      if (ok) ctx.changed();
      return ok;
    },
    updateAccount(id: string, o: AccountUpdate) {
      if (!store.updateAccount(id, o)) throw notFound('Account', id);
      ctx.changed();
    },
    getAccount(id) {
      const a = store.accounts.get(id);
      return (
        a && {
          account_id: a.id,
          credits: a.credits,
          verification_credits: a.verification_credits,
          suspended: a.suspended,
        }
      );
    },
    advanceClock(ms: number) {
      store.clockOffset += ms;
      ctx.changed();
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
