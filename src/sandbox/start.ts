import type { AddressInfo } from 'node:net';
import { createAdmin, usableClockOffset } from './admin.js';
import { newStats, type ResolvedOptions, type SandboxContext } from './context.js';
import { createRandom } from './hash.js';
import { newAdminToken } from './keys.js';
import { openState } from './persist.js';
import { createSandboxServer } from './server.js';
import type { StateLog } from './state-log.js';
import { Store } from './store.js';
import type { SandboxHandle, SandboxOptions } from './types.js';
import { faultProblems } from './faults.js';
import { usageError } from '../errors.js';

/** Defaults of `startSandbox` (the CLI has its own: port 4010, job 1s, 50 req/s). */
export function resolveSandboxOptions(o: SandboxOptions = {}): ResolvedOptions {
  const r: ResolvedOptions = {
    host: o.host ?? '127.0.0.1',
    port: o.port ?? 0,
    credits: o.credits ?? 100_000,
    verificationCredits: o.verificationCredits ?? 10_000,
    jobMs: o.jobMs ?? 0,
    recordMs: o.recordMs ?? 0,
    parallelJobs: o.parallelJobs ?? 0,
    ttlMs: o.ttlMs ?? 24 * 3_600_000,
    rateLimit: o.rateLimit ?? 0,
    maxBatch: o.maxBatch ?? 10_000,
    maxBodyBytes: o.maxBodyBytes ?? 32 * 1024 * 1024,
    requestTimeoutMs: o.requestTimeoutMs ?? 30_000,
    seed: o.seed ?? 1,
    maxJobsPerAccount: o.maxJobsPerAccount ?? 10_000,
    maxStoredBytesPerAccount: o.maxStoredBytesPerAccount ?? 2 * 1024 ** 3,
    maxUnpaidBytesPerAccount: o.maxUnpaidBytesPerAccount ?? 128 * 1024 ** 2,
    stateCompactBytes: o.stateCompactBytes ?? 64 * 1024 ** 2,
    stateDir: o.stateDir,
    specOnly: o.specOnly === true,
  };
  for (const k of [
    'port',
    'credits',
    'verificationCredits',
    'jobMs',
    'recordMs',
    'parallelJobs',
    'ttlMs',
    'rateLimit',
    'maxBatch',
    'maxBodyBytes',
    'requestTimeoutMs',
    'seed',
    'maxJobsPerAccount',
    'maxStoredBytesPerAccount',
    'maxUnpaidBytesPerAccount',
    'stateCompactBytes',
  ] as const) {
    if (!Number.isFinite(r[k]) || r[k] < 0)
      throw usageError(`sandbox option ${k}: expected a number >= 0, got ${r[k]}`);
  }
  if (!Number.isInteger(r.port) || r.port > 65_535)
    throw usageError(`sandbox option port: expected a whole number from 0 to 65535, got ${r.port}`);
  for (const k of ['credits', 'verificationCredits'] as const) {
    if (!Number.isSafeInteger(r[k]))
      throw usageError(
        `sandbox option ${k}: expected a whole number of credits from 0 to ${Number.MAX_SAFE_INTEGER}, got ${r[k]}`,
      );
  }
  return r;
}

/** What to do when the sandbox cannot listen, by the error's code. */
const LISTEN_HINTS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'pick another --port (0 picks a free one)',
  EACCES: 'a port below 1024 needs privileges: pick another --port (0 picks a free one)',
  EADDRNOTAVAIL:
    'no interface of this machine has that address: pick another --host (127.0.0.1 by default)',
  ENOTFOUND: 'no host of that name: pick another --host (127.0.0.1 by default)',
  EAI_AGAIN: 'the name could not be looked up: pick another --host (127.0.0.1 by default)',
};

/** Starts a sandbox of the enrichment service; resolves once it listens. */
export async function startSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const opts = resolveSandboxOptions(options);
  const faults = options.faults ?? {};
  const problems = faultProblems(faults);
  if (problems.length) throw usageError(`sandbox faults: ${problems.join('; ')}`);
  const state = opts.stateDir
    ? await openState(opts.stateDir, { minBytes: opts.stateCompactBytes })
    : undefined;
  const log: StateLog | undefined = state?.log;
  const store = state?.store ?? new Store(newAdminToken());
  // A saved clock the admin API could not have set (hand-edited, older versions) restarts at 0.
  if (usableClockOffset(store.clockOffset) !== store.clockOffset) store.setClockOffset(0);
  const baseNow = options.now ?? Date.now;
  const ctx: SandboxContext = {
    options: opts,
    store,
    now: () => baseNow() + store.clockOffset,
    faults: structuredClone(faults),
    random: createRandom(opts.seed ^ 0x5eed),
    buckets: new Map(),
    stats: newStats(),
    firstAccountId: '',
    baseUrl: '',
    persisted: () => log?.persisted() ?? Promise.resolve(),
  };
  const first =
    [...store.accounts.values()][0] ?? store.createAccount(opts.credits, opts.verificationCredits);
  ctx.firstAccountId = first.id;
  const restored = state?.restored === true;
  const { key: apiKey } = store.createKey(
    first.id,
    restored ? 'restart' : 'default',
    '',
    ctx.now(),
  );
  const admin = createAdmin(ctx);
  const { server, sockets } = createSandboxServer(ctx, admin);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      void log?.close();
      // A busy or forbidden port, or an address this machine does not have, is the user's to
      // fix, not a crash.
      const hint = err.code === undefined ? undefined : LISTEN_HINTS[err.code];
      if (hint) {
        reject(
          usageError(`sandbox: cannot listen on ${opts.host}:${opts.port}: ${err.code}`, { hint }),
        );
      } else reject(err);
    });
    server.listen(opts.port, opts.host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  ctx.baseUrl = `http://${host}:${addr.port}`;
  await ctx.persisted();
  let closed: Promise<void> | undefined;
  return {
    url: ctx.baseUrl,
    apiKey,
    adminToken: store.adminToken,
    accountId: first.id,
    admin,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }).then(async () => {
        await log?.close();
      });
      return closed;
    },
  };
}
