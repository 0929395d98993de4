import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { journalAccount, openJournal, type Journal } from '../../src/pipeline/journal/journal.js';
import {
  lostByDeadRuns,
  markLostByDeadRuns,
  withLostMarks,
} from '../../src/pipeline/verify/lost-elsewhere.js';
import type { CachedAnswer, ResultsCache } from '../../src/pipeline/types.js';

// The addresses other verification runs sent and never saw answered because their process died
// (lost-elsewhere.ts), seen apart from a service: whose runs count, and what is marked.

const KIND = 'verify-emails';

/** A verification run's journal of `account` under `runsDir`, left open (its lock held). */
async function verifyRun(
  runsDir: string,
  key: string,
  account: string | undefined,
  kind = KIND,
  at = 1_000,
) {
  return openJournal({
    runsDir,
    key,
    header: {
      kind,
      input: { path: `/data/${key}.csv`, size: 10, sha256: key.padEnd(64, '0') },
      options: { column: 'Email', ...(account ? { account: journalAccount(account) } : {}) },
      command: `enrich verify-emails ${key}.csv -o out.csv`,
    },
    restart: false,
    now: () => at,
  });
}

/** Journals `address` sent at `at` (and answered, when `answered`). */
async function sent(j: Journal, address: string, answered = false) {
  await j.append({ t: 'vsend', addr: address });
  if (answered)
    await j.append({ t: 'vanswer', addr: address, status: 'valid', charged: true, remaining: 9 });
}

/** A cache in memory, counting its commits. */
function memoryCache() {
  const map = new Map<string, CachedAnswer>();
  let commits = 0;
  const cache: ResultsCache = {
    get: (k) => map.get(k),
    put: (k, a) => void map.set(k, a),
    committed: async () => void commits++,
  };
  return { map, cache, commits: () => commits };
}

describe('lostByDeadRuns', () => {
  it('takes the addresses sent and never answered of the account’s other verification runs no process holds, with when they were sent', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-lost-'));
    const dead = await verifyRun(runsDir, 'dead', 'acct');
    await sent(dead, 'a@x.io');
    await sent(dead, 'b@x.io', true);
    await dead.append({ t: 'vsend', addr: 'c@x.io' });
    await dead.append({
      t: 'vfail',
      addr: 'c@x.io',
      code: 'NETWORK',
      message: 'refused',
      unconfirmed: false,
    });
    await dead.close(); // its process is gone: its lock is free
    const live = await verifyRun(runsDir, 'live', 'acct');
    await sent(live, 'd@x.io');
    const other = await verifyRun(runsDir, 'other-account', 'acct-2');
    await sent(other, 'e@x.io');
    await other.close();
    const bulk = await verifyRun(runsDir, 'bulk', 'acct', 'contacts');
    await sent(bulk, 'f@x.io');
    await bulk.close();
    const mine = await verifyRun(runsDir, 'mine', 'acct');
    await sent(mine, 'g@x.io');
    await mine.close();

    const c = { runsDir, key: 'mine', account: 'acct', kind: KIND };
    expect([...(await lostByDeadRuns(c))]).toEqual([['a@x.io', 1_000]]);
    await live.close();
    expect(new Set((await lostByDeadRuns(c)).keys())).toEqual(new Set(['a@x.io', 'd@x.io']));
    expect([...(await lostByDeadRuns({ ...c, budgetMs: -1 }))]).toEqual([]);
  });

  it('a run whose journal ends done (exit 0, everything written) is not read; one resumed after it is', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-lost-'));
    const done = await verifyRun(runsDir, 'done', 'acct');
    await sent(done, 'a@x.io'); // (a journal the tail alone rules out)
    await done.append({ t: 'done', output: 'out.csv', exit: 0 });
    await done.close();
    const again = await verifyRun(runsDir, 'again', 'acct');
    await again.append({ t: 'done', output: 'out.csv', exit: 0 });
    await sent(again, 'b@x.io');
    await again.close();
    const lost = await lostByDeadRuns({ runsDir, key: 'mine', account: 'acct', kind: KIND });
    expect([...lost.keys()]).toEqual(['b@x.io']);
  });

  it('an address two dead runs sent keeps the latest send; runs with no account are an injected API’s', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-lost-'));
    for (const [key, at] of [
      ['early', 1_000],
      ['late', 5_000],
      ['middle', 3_000],
    ] as const) {
      const j = await verifyRun(runsDir, key, 'acct', KIND, at);
      await sent(j, 'a@x.io');
      await j.close();
    }
    const anyAccount = await verifyRun(runsDir, 'injected', undefined);
    await sent(anyAccount, 'b@x.io');
    await anyAccount.close();
    const c = { runsDir, key: 'mine', kind: KIND };
    expect([...(await lostByDeadRuns({ ...c, account: 'acct' }))]).toEqual([['a@x.io', 5_000]]);
    expect([...(await lostByDeadRuns({ ...c, account: undefined }))]).toEqual([['b@x.io', 1_000]]);
  });

  it('marks them where the cache holds nothing or an older answer, and waits for the commit; the dry run’s view reads them as marks', async () => {
    const runsDir = await mkdtemp(join(tmpdir(), 'enrich-lost-'));
    const dead = await verifyRun(runsDir, 'dead', 'acct');
    await sent(dead, 'a@x.io');
    await sent(dead, 'b@x.io');
    await sent(dead, 'c@x.io');
    await dead.close();
    const { map, cache, commits } = memoryCache();
    const answer = { records: [{ status: 'valid' }], at: 5, charged: true };
    map.set('b@x.io', answer); // older than the lost request: the mark goes over it
    const later = { records: [{ status: 'invalid' }], at: 2_000, charged: true };
    map.set('c@x.io', later); // came after it: it stays as it is
    const lost = await lostByDeadRuns({ runsDir, key: 'mine', account: 'acct', kind: KIND });
    const view = withLostMarks(cache, lost);
    expect(view.get('a@x.io')).toEqual({
      records: [],
      at: 1_000,
      charged: false,
      unconfirmed: true,
    });
    expect(view.get('b@x.io')).toEqual({ ...answer, unansweredAt: 1_000 });
    expect(view.get('c@x.io')).toBe(later);
    expect(view.get('z@x.io')).toBeUndefined();
    expect(map.has('a@x.io')).toBe(false); // the view writes nothing

    await markLostByDeadRuns({ runsDir, key: 'mine', account: 'acct', kind: KIND }, cache);
    expect(map.get('a@x.io')).toEqual({
      records: [],
      at: 1_000,
      charged: false,
      unconfirmed: true,
    });
    expect(map.get('b@x.io')).toEqual({ ...answer, unansweredAt: 1_000 });
    expect(map.get('c@x.io')).toBe(later);
    expect(commits()).toBe(1);
    // Nothing lost: nothing marked, no commit waited for.
    await markLostByDeadRuns({ runsDir, key: 'dead', account: 'acct', kind: KIND }, cache);
    expect(commits()).toBe(1);
    // A cache with no commits to wait for (a library user's): marked all the same.
    const plain = new Map<string, CachedAnswer>();
    const bare: ResultsCache = { get: (k) => plain.get(k), put: (k, a) => void plain.set(k, a) };
    await markLostByDeadRuns({ runsDir, key: 'mine', account: 'acct', kind: KIND }, bare);
    expect([...plain.keys()]).toEqual(['a@x.io', 'b@x.io', 'c@x.io']);
  });
});
