import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type EnrichClient } from '../../src/index.js';
import { verifyEmailsFile } from '../../src/bulk/verify-emails.js';
import { turnDir } from '../../src/pipeline/verify/sending-turn.js';
import { deadPid } from '../helpers/pids.js';
import { SANDBOX_MODES, sandboxPerTest, tempDir } from './bulk-harness.js';

// Two verification runs of different lists of one account at once (a copy of a list that grew,
// a cron job beside a run by hand): the later one waits for the earlier to end, then takes the
// addresses both hold from the results cache (sending-turn.ts). Before, both sent them.

const sandbox = sandboxPerTest();
const clients: EnrichClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function rig(specOnly = false) {
  const s = await sandbox({ specOnly, faults: { latency_ms: 30 } });
  const dir = await tempDir();
  const client = createClient({ baseUrl: s.url, apiKey: s.apiKey });
  clients.push(client);
  const paid = () => s.admin.stats().verification_credits_charged;
  const warnings: string[] = [];
  const list = async (name: string, from: number, count: number) => {
    const emails = Array.from({ length: count }, (_, i) => `lead${from + i}@firm${i % 5}.com`);
    await writeFile(join(dir, name), `email\n${emails.join('\n')}\n`);
    return join(dir, name);
  };
  const verify = (input: string, more: Record<string, unknown> = {}) =>
    verifyEmailsFile({
      input,
      output: `${input}.out.csv`,
      service: { client, baseUrl: s.url },
      runsDir: join(dir, 'runs'),
      cacheDir: join(dir, 'cache'),
      concurrency: 2,
      onWarning: (w) => warnings.push(w),
      ...more,
    });
  return { s, dir, client, paid, warnings, list, verify };
}

describe('verify-emails: one run of an account sends at a time', () => {
  it.each(SANDBOX_MODES)(
    'a run of a list that shares addresses with a run going on waits for it, then pays only for its own new addresses ($name)',
    async ({ specOnly }) => {
      const { paid, warnings, list, verify } = await rig(specOnly);
      const monday = await list('monday.csv', 0, 20);
      const tuesday = await list('tuesday.csv', 0, 25); // monday's 20 and 5 more
      const first = verify(monday);
      while (paid() < 2) await delay(5);
      const second = await verify(tuesday);
      const done = await first;
      expect([done.exitCode, done.sent]).toEqual([0, 20]);
      expect([second.exitCode, second.cacheHits, second.sent]).toEqual([0, 20, 5]);
      expect(paid()).toBe(25); // each address once
      expect(warnings).toEqual([
        expect.stringMatching(
          /^waiting for another run in this process \(verifying .*monday\.csv\) to finish: addresses both lists hold are then taken from the results cache/,
        ),
      ]);
    },
  );

  it('a run still waiting when its time is up stops having sent nothing (exit 2, naming the list it waited for)', async () => {
    const { dir, paid, list, verify } = await rig();
    const first = verify(await list('monday.csv', 0, 40));
    while (paid() < 2) await delay(5);
    await expect(verify(await list('other.csv', 100, 5), { timeoutMs: 400 })).rejects.toMatchObject(
      {
        code: 'RUN_IN_PROGRESS',
        exitCode: 2,
        message: expect.stringMatching(
          /^another run in this process \(verifying .*monday\.csv\) was still verifying addresses of this account when this run's time was up \(timeoutMs\): nothing was sent/,
        ),
      },
    );
    expect((await first).exitCode).toBe(0);
    expect(paid()).toBe(40); // other.csv sent nothing
    // It left no journal either: its next run is a new run, not a resumed one.
    const next = await verify(join(dir, 'other.csv'));
    expect([next.exitCode, next.resumed, next.sent, paid()]).toEqual([0, false, 5, 45]);
  });

  it('a turn left by a process that died is taken over at once, and the run ends giving it back', async () => {
    const { dir, client, paid, warnings, list, verify } = await rig();
    const turn = turnDir(join(dir, 'runs'), client.account);
    await mkdir(turn, { recursive: true });
    await writeFile(join(turn, 'lock'), String(deadPid()));
    await writeFile(join(turn, 'holder.json'), JSON.stringify({ pid: 1, input: 'gone.csv' }));
    const done = await verify(await list('list.csv', 0, 6));
    expect([done.exitCode, done.sent, paid()]).toEqual([0, 6, 6]);
    expect(warnings).toEqual([]);
    expect(await readdir(turn)).toEqual([]);
  });

  it('a run that neither reads nor fills the cache (--no-cache) does not wait: no run could take its answers', async () => {
    const { paid, warnings, list, verify } = await rig();
    const first = verify(await list('monday.csv', 0, 30));
    while (paid() < 2) await delay(5);
    const second = await verify(await list('tuesday.csv', 0, 3), { cache: false });
    expect([second.exitCode, second.sent]).toEqual([0, 3]);
    expect(warnings).toEqual([]);
    expect((await first).exitCode).toBe(0);
  });

  it.each(SANDBOX_MODES)(
    'a --refresh run takes part too: a run of another list started beside it waits, then pays only for its own new addresses ($name)',
    async ({ specOnly }) => {
      const { paid, warnings, list, verify } = await rig(specOnly);
      const first = verify(await list('monday.csv', 0, 20), { refresh: true });
      while (paid() < 2) await delay(5);
      const second = await verify(await list('tuesday.csv', 0, 25));
      expect((await first).sent).toBe(20);
      expect([second.exitCode, second.cacheHits, second.sent, paid()]).toEqual([0, 20, 5, 25]);
      expect(warnings).toHaveLength(1);
    },
  );
});
