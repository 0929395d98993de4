import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createClient,
  enrichFile,
  type EnrichClient,
  type JobEvent,
  type RunProgress,
} from '../../src/index.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { CONTACT_HEADER, contactRows, sandboxPerTest, tempDir, writeCsv } from './bulk-harness.js';

const sandbox = sandboxPerTest();
const clients: EnrichClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/**
 * Enriches 100 contacts in one batch of 100 against `s` (the run on `clock` when given, the
 * sandbox's own), and returns the job events and each progress report's `jobsRunning`.
 */
async function run100(
  s: SandboxHandle,
  clock?: { now: () => number; sleep: (ms: number) => Promise<void> },
  expected: { timeoutMs?: number; exitCode: number } = { exitCode: 0 },
) {
  const client = createClient({
    baseUrl: s.url,
    apiKey: s.apiKey,
    ...(clock ? { clock: { now: clock.now } } : {}),
  });
  clients.push(client);
  const dir = await tempDir();
  const events: JobEvent[] = [];
  const running: (number | undefined)[] = [];
  const summary = await enrichFile({
    kind: 'contacts',
    input: await writeCsv(dir, 'leads.csv', CONTACT_HEADER, contactRows(100)),
    output: join(dir, 'out.csv'),
    runsDir: join(dir, 'runs'),
    batchSize: 100,
    service: { client, baseUrl: s.url },
    ...(clock ? { env: clock } : {}),
    ...(expected.timeoutMs !== undefined ? { timeoutMs: expected.timeoutMs } : {}),
    onJob: (e) => events.push(e),
    onProgress: (p: RunProgress) => running.push(p.jobsRunning),
  });
  expect(summary.exitCode).toBe(expected.exitCode);
  return { events, running };
}

describe('job events and the progress of running jobs (enrichFile, sandbox)', () => {
  it("reports each job submitted, running with the 202's progress, and done; the run's share counts it", async () => {
    // One clock for the sandbox and the run, moved only by the run's sleeps: a 40 s job
    // answers 202 at once (0 of 100 processed, Retry-After 40 s, polled after 30 s), then
    // 202 with 75 of 100, then 200.
    let now = Date.now();
    const s = await sandbox({ jobMs: 40_000, now: () => now });
    const { events, running } = await run100(s, {
      now: () => now,
      sleep: async (ms: number) => void (now += ms),
    });
    // One job (the shared clock makes a second one's timing depend on the first's sleeps).
    expect(events.map((e) => e.t)).toEqual(['submitted', 'pending', 'pending', 'done']);
    expect(events[0]).toMatchObject({ t: 'submitted', batch: '0', rows: 100 });
    expect(events[1]).toMatchObject({ t: 'pending', batch: '0', processed: 0, total: 100 });
    expect(events[2]).toMatchObject({ t: 'pending', batch: '0', processed: 75, total: 100 });
    expect(events[3]).toMatchObject({ t: 'done', batch: '0', records: 100, credits: 100 });
    // The job three-quarters done, then none left running.
    expect(running).toContain(0.75);
    expect(running.at(-1)).toBeUndefined();
  });

  it('reports a batch the service found too large as sent again, then each part submitted and done', async () => {
    const { events } = await run100(await sandbox({ jobMs: 0, maxBatch: 60 }));
    expect(events[0]).toEqual({ t: 'retried', batch: '0', rows: 100, reason: 'too-large' });
    const done = events.filter((e) => e.t === 'done');
    expect(done.map((e) => [e.batch, e.records])).toEqual([
      ['0.0', 50],
      ['0.1', 50],
    ]);
    expect(events.filter((e) => e.t === 'submitted').map((e) => e.batch)).toEqual(['0.0', '0.1']);
  });

  it('reports a job still running at the deadline as ended, and no longer counts it running', async () => {
    let now = Date.now();
    const s = await sandbox({ jobMs: 40_000, now: () => now });
    const clock = { now: () => now, sleep: async (ms: number) => void (now += ms) };
    // --timeout 20s: a look at once (0 of 100), a last one at the deadline (50 of 100); exit 3.
    const { events, running } = await run100(s, clock, { timeoutMs: 20_000, exitCode: 3 });
    expect(events.map((e) => e.t)).toEqual(['submitted', 'pending', 'pending', 'ended']);
    expect(events[2]).toMatchObject({ processed: 50, total: 100 });
    expect(events[3]).toMatchObject({ t: 'ended', batch: '0', state: 'timeout' });
    expect(running).toContain(0.5);
    expect(running.at(-1)).toBeUndefined();
  });
});
