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
  ready_at: number;
  expires_at: number;
  /** Input records submitted. */
  total: number;
  /**
   * The result records as JSON array text, serialised once when the job is made: a
   * download (or a replay) only joins strings, and the heap holds one flat string per
   * job instead of thousands of record objects for the GC to walk.
   */
  results: string;
  idempotency?: { key: string; body_hash: string };
}

/** Everything the sandbox persists with --state. */
export interface StoreData {
  version: 1;
  admin_token: string;
  clock_offset: number;
  accounts: Account[];
  keys: KeyRecord[];
  jobs: Job[];
}

/** Accounts, keys and jobs in memory (null-prototype-free Maps: request data never becomes a key of a plain object). */
export class Store {
  readonly accounts = new Map<string, Account>();
  readonly keys = new Map<string, KeyRecord>();
  readonly jobs = new Map<string, Job>();
  /** `${account}\u0000${kind}\u0000${idempotency key}` -> job id. */
  readonly idempotency = new Map<string, string>();
  clockOffset = 0;

  constructor(readonly adminToken: string) {}

  /** Creates an account with the given balances. */
  createAccount(credits: number, verificationCredits: number): Account {
    const acc: Account = {
      id: newId('acc'),
      credits,
      verification_credits: verificationCredits,
      suspended: false,
    };
    this.accounts.set(acc.id, acc);
    return acc;
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
    this.keys.set(record.id, record);
    return { record, key };
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
    k.revoked = true;
    return true;
  }

  /** Applies balance/suspension changes; false when there is no such account. */
  updateAccount(id: string, o: AccountUpdate): boolean {
    const acc = this.accounts.get(id);
    if (!acc) return false;
    if (o.credits !== undefined) acc.credits = o.credits;
    if (o.verification_credits !== undefined) acc.verification_credits = o.verification_credits;
    if (o.suspended !== undefined) acc.suspended = o.suspended;
    return true;
  }

  /** Stores a job (and its idempotency key). */
  addJob(job: Job): void {
    this.jobs.set(job.id, job);
    if (job.idempotency)
      this.idempotency.set(idemKey(job.account_id, job.kind, job.idempotency.key), job.id);
  }

  /** The live job a repeated Idempotency-Key refers to. */
  jobForIdempotencyKey(accountId: string, kind: Job['kind'], key: string): Job | undefined {
    const id = this.idempotency.get(idemKey(accountId, kind, key));
    return id === undefined ? undefined : this.jobs.get(id);
  }

  /** Deletes jobs whose results expired (the data is gone for good). */
  purgeExpired(now: number): number {
    let n = 0;
    for (const job of this.jobs.values()) {
      if (now >= job.expires_at) {
        this.jobs.delete(job.id);
        if (job.idempotency)
          this.idempotency.delete(idemKey(job.account_id, job.kind, job.idempotency.key));
        n++;
      }
    }
    return n;
  }

  /** A plain snapshot for persistence. */
  toData(): StoreData {
    return {
      version: 1,
      admin_token: this.adminToken,
      clock_offset: this.clockOffset,
      accounts: [...this.accounts.values()],
      keys: [...this.keys.values()],
      jobs: [...this.jobs.values()],
    };
  }

  /** Rebuilds a store from a snapshot. */
  static fromData(data: StoreData): Store {
    const s = new Store(data.admin_token);
    s.clockOffset = data.clock_offset;
    for (const a of data.accounts) s.accounts.set(a.id, a);
    for (const k of data.keys) s.keys.set(k.id, k);
    for (const j of data.jobs) {
      // State saved before results were kept as text held the record objects; before the
      // submission answer was built per reply, jobs held it (with a download_url on the
      // address of that run).
      const old = j as Job & { records?: unknown[]; response?: unknown };
      if (typeof old.results !== 'string') old.results = JSON.stringify(old.records ?? []);
      delete old.records;
      delete old.response;
      s.addJob(old);
    }
    return s;
  }
}

function idemKey(account: string, kind: string, key: string): string {
  return `${account}\u0000${kind}\u0000${key}`;
}
