import { EnrichError } from '../errors.js';
import type { AccountView, KeyListing } from './types.js';

/** Where a running sandbox is and the admin token that opens its admin API. */
export interface AdminTarget {
  url: string;
  adminToken: string;
}

async function call(
  t: AdminTarget,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const url = `${t.url.replace(/\/+$/, '')}${path}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: {
        Authorization: `Bearer ${t.adminToken}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new EnrichError('NETWORK', `${method} ${path}: cannot reach a sandbox at ${t.url}`, {
      cause: err,
      hint: 'start one with `enrich sandbox`, or name it: --url, --base-url or ENRICH_SANDBOX_URL',
    });
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    throw new EnrichError(
      'MALFORMED_RESPONSE',
      `${method} ${path}: ${res.status} with a body that is not JSON`,
    );
  }
  if (res.ok) return json;
  const message = (json as { message?: string } | undefined)?.message ?? res.statusText;
  const what = `${method} ${path}: ${res.status} ${message}`;
  if (res.status === 401) {
    throw new EnrichError('AUTH_INVALID', what, {
      hint: 'pass the admin token `enrich sandbox` printed: --admin-token or ENRICH_SANDBOX_ADMIN_TOKEN',
    });
  }
  if (res.status === 404) throw new EnrichError('API_NOT_FOUND', what);
  if (res.status === 400) throw new EnrichError('API_VALIDATION', what);
  throw new EnrichError('SERVER_ERROR', what);
}

/** Creates a key on a running sandbox; the key is in the answer only this once. */
export async function adminCreateKey(
  t: AdminTarget,
  o: { name?: string; description?: string; account_id?: string } = {},
): Promise<{ id: string; api_key: string; name: string }> {
  return (await call(t, 'POST', '/_sandbox/keys', o)) as {
    id: string;
    api_key: string;
    name: string;
  };
}

/** Lists the keys of a running sandbox (masked). */
export async function adminListKeys(t: AdminTarget): Promise<KeyListing[]> {
  return ((await call(t, 'GET', '/_sandbox/keys')) as { keys: KeyListing[] }).keys;
}

/** Revokes a key of a running sandbox. */
export async function adminRevokeKey(t: AdminTarget, id: string): Promise<void> {
  await call(t, 'DELETE', `/_sandbox/keys/${encodeURIComponent(id)}`);
}

/** Creates an account (with its first key, shown only here) on a running sandbox. */
export async function adminCreateAccount(
  t: AdminTarget,
  o: { credits?: number; verification_credits?: number } = {},
): Promise<{ account_id: string; api_key: string }> {
  return (await call(t, 'POST', '/_sandbox/accounts', o)) as {
    account_id: string;
    api_key: string;
  };
}

/** Lists the accounts of a running sandbox, oldest first, with their balances. */
export async function adminListAccounts(t: AdminTarget): Promise<AccountView[]> {
  return ((await call(t, 'GET', '/_sandbox/accounts')) as { accounts: AccountView[] }).accounts;
}

/** One account of a running sandbox. */
export async function adminGetAccount(t: AdminTarget, id: string): Promise<AccountView> {
  return (await call(t, 'GET', `/_sandbox/accounts/${encodeURIComponent(id)}`)) as AccountView;
}

/** Sets an account's balances (or suspends it); answers the account as it now stands. */
export async function adminUpdateAccount(
  t: AdminTarget,
  id: string,
  o: { credits?: number; verification_credits?: number; suspended?: boolean },
): Promise<AccountView> {
  const path = `/_sandbox/accounts/${encodeURIComponent(id)}`;
  return (await call(t, 'PUT', path, o)) as AccountView;
}
