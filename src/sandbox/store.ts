import { hashSecret, maskKey, newApiKey, newId, sameHash } from './keys.js';
import type { AccountUpdate, KeyListing } from './types.js';

/** An account: its own keys, balances and jobs. */
export interface Account {
  id: string;
  credits: number;
  verification_credits: number;
  suspended: boolean;
}

/** A stored key: only its hash, never the key. */
export interface KeyRecord {
  id: string;
  name: string;
  description: string;
  account_id: string;
  hash: string;
  masked: string;
  revoked: boolean;
  created_at: string;
}

/** A bulk job and its results (generated and charged at creation). */
export interface Job {
  id: string;
  kind: 'contacts' | 'companies';
  account_id: string;
  created_at: number;
  /** When it left the account's queue (absent: at once, when it was created). */
  started_at?: number;
  ready_at: number;
  expires_at: number;
  /** Input records submitted. */
  total: number;
  /** Result records and the credits charged for them (absent on jobs saved by older versions). */
  records?: number;
  charged?: number;
  /**
   * The result records as JSON array text, serialised once when the job is made: a
   * download (or a replay) only joins strings, and the heap holds one flat string per
   * job instead of thousands of record objects for the GC to walk.
   */
  results: string;
  idempotency?: { key: string; body_hash: string };
}

/**
 * One change of the state, as the --state log records it. A job carries the account as it is
 * after the job's debit: the charge and the job are one record, never one without the other.
 */
export type StateEvent =
  | { t: 'account'; account: Account }
  | { t: 'key'; key: KeyRecord }
  | { t: 'clock'; offset: number }
  | { t: 'job'; job: Job; account?: Account }
  | { t: 'drop'; ids: string[] };

/** What one account keeps stored: unexpired jobs, their results' size, and the part nobody paid for. */
export interface Usage {
  jobs: number;
  bytes: number;
  unpaidBytes: number;
}

/** The size of a job's stored results, and the share of it whose records were not charged. */
export function jobBytes(job: Job): { bytes: number; unpaidBytes: number } {
  const bytes = job.results.length;
  const records = job.records ?? 0;
  const unpaid = records > 0 ? Math.max(0, records - (job.charged ?? records)) / records : 0;
  return { bytes, unpaidBytes: Math.ceil(bytes * unpaid) };
}

/** Accounts, keys and jobs in memory (null-prototype-free Maps: request data never becomes a key of a plain object). */
export class Store {
  readonly accounts = new Map<string, Account>();
  readonly keys = new Map<string, KeyRecord>();
  readonly jobs = new Map<string, Job>();
  /** `${account}\u0000${kind}\u0000${idempotency key}` -> job id. */
  readonly idempotency = new Map<string, string>();
  readonly usage = new Map<string, Usage>();
  clockOffset = 0;
  /**
   * Receives every change before memory is changed (the --state log writes it there); when it
   * throws, the change does not happen.
   */
  record: (event: StateEvent) => void = () => {};

  constructor(readonly adminToken: string) {}

  /** Applies a change: records it first, then makes it in memory. */
  private commit(event: StateEvent): void {
    this.record(event);
    this.apply(event);
  }

  /** Makes a recorded change in memory (also how the log is replayed). */
  apply(event: StateEvent): void {
    switch (event.t) {
      case 'account': {
        const acc = this.accounts.get(event.account.id);
        if (acc) Object.assign(acc, event.account);
        else this.accounts.set(event.account.id, { ...event.account });
        return;
      }
      case 'key':
        this.keys.set(event.key.id, { ...event.key });
        return;
      case 'clock':
        this.clockOffset = event.offset;
        return;
      case 'job':
        if (event.account) this.apply({ t: 'account', account: event.account });
        this.putJob(event.job);
        return;
      case 'drop':
        for (const id of event.ids) this.deleteJob(id);
        return;
    }
  }

  /** Creates an account with the given balances. */
  createAccount(credits: number, verificationCredits: number): Account {
    const id = newId('acc');
    this.commit({
      t: 'account',
      account: { id, credits, verification_credits: verificationCredits, suspended: false },
    });
    return this.accounts.get(id) as Account;
  }

  /** Creates a key for an account and returns it once; only its hash is kept. */
  createKey(
    accountId: string,
    name: string,
    description: string,
    now: number,
  ): { record: KeyRecord; key: string } {
    const key = newApiKey();
    const record: KeyRecord = {
      id: newId('key'),
      name,
      description,
      account_id: accountId,
      hash: hashSecret(key),
      masked: maskKey(key),
      revoked: false,
      created_at: new Date(now).toISOString(),
    };
    this.commit({ t: 'key', key: record });
    return { record: this.keys.get(record.id) as KeyRecord, key };
  }

  /** The account and key a presented API key authenticates, or undefined (revoked keys do not). */
  authenticate(presented: string): { account: Account; key: KeyRecord } | undefined {
    const h = hashSecret(presented);
    let found: KeyRecord | undefined;
    // Compare against every key so the time taken does not depend on which one matches.
    for (const k of this.keys.values()) if (sameHash(k.hash, h) && !k.revoked) found = k;
    const account = found && this.accounts.get(found.account_id);
    return found && account ? { account, key: found } : undefined;
  }

  /** Lists keys in creation order, masked. */
  listKeys(): KeyListing[] {
    return [...this.keys.values()].map((k) => ({
      id: k.id,
      name: k.name,
      description: k.description,
      account_id: k.account_id,
      masked: k.masked,
      revoked: k.revoked,
      created_at: k.created_at,
    }));
  }

  /** Revokes a key; false when there is no such key. */
  revokeKey(id: string): boolean {
    const k = this.keys.get(id);
    if (!k) return false;
    this.commit({ t: 'key', key: { ...k, revoked: true } });
    return true;
  }

  /** Applies balance/suspension changes; false when there is no such account. */
  updateAccount(id: string, o: AccountUpdate): boolean {
    const acc = this.accounts.get(id);
    if (!acc) return false;
    const next = { ...acc };
    if (o.credits !== undefined) next.credits = o.credits;
    if (o.verification_credits !== undefined) next.verification_credits = o.verification_credits;
    if (o.suspended !== undefined) next.suspended = o.suspended;
    this.commit({ t: 'account', account: next });
    return true;
  }

  /** Takes credits (or verification credits) from an account. */
  charge(account: Account, credits: number, verificationCredits = 0): void {
    if (credits === 0 && verificationCredits === 0) return;
    this.commit({
      t: 'account',
      account: {
        ...account,
        credits: account.credits - credits,
        verification_credits: account.verification_credits - verificationCredits,
      },
    });
  }

  /** Moves the admin clock offset. */
  setClockOffset(offset: number): void {
    this.commit({ t: 'clock', offset });
  }

  /** Stores a job and takes its credits from its account, as one change. */
  addJob(job: Job, charged = 0): void {
    const acc = this.accounts.get(job.account_id);
    const account = acc && { ...acc, credits: acc.credits - charged };
    this.commit({ t: 'job', job, account });
  }

  /** The live job a repeated Idempotency-Key refers to. */
  jobForIdempotencyKey(accountId: string, kind: Job['kind'], key: string): Job | undefined {
    const id = this.idempotency.get(idemKey(accountId, kind, key));
    return id === undefined ? undefined : this.jobs.get(id);
  }

  /** What an account keeps stored now. */
  usageOf(accountId: string): Usage {
    return this.usage.get(accountId) ?? { jobs: 0, bytes: 0, unpaidBytes: 0 };
  }

  /** Deletes jobs whose results expired (the data is gone for good). */
  purgeExpired(now: number): number {
    const ids: string[] = [];
    for (const job of this.jobs.values()) if (now >= job.expires_at) ids.push(job.id);
    if (ids.length > 0) this.commit({ t: 'drop', ids });
    return ids.length;
  }

  private putJob(job: Job): void {
    if (this.jobs.has(job.id)) this.deleteJob(job.id);
    this.jobs.set(job.id, job);
    if (job.idempotency)
      this.idempotency.set(idemKey(job.account_id, job.kind, job.idempotency.key), job.id);
    this.count(job, 1);
  }

  private deleteJob(id: string): void {
    const job = this.jobs.get(id);
    if (!job) return;
    this.jobs.delete(id);
    if (job.idempotency)
      this.idempotency.delete(idemKey(job.account_id, job.kind, job.idempotency.key));
    this.count(job, -1);
  }

  private count(job: Job, sign: 1 | -1): void {
    const u = this.usageOf(job.account_id);
    const { bytes, unpaidBytes } = jobBytes(job);
    const next = {
      jobs: u.jobs + sign,
      bytes: u.bytes + sign * bytes,
      unpaidBytes: u.unpaidBytes + sign * unpaidBytes,
    };
    if (next.jobs <= 0) this.usage.delete(job.account_id);
    else this.usage.set(job.account_id, next);
  }
}

function idemKey(account: string, kind: string, key: string): string {
  return `${account}\u0000${kind}\u0000${key}`;
}
