/**
 * A SIGKILL storm against `enrich sandbox --state`: the sandbox is killed twenty times right
 * after it answered submissions (more were in flight), restarted on the same state each time.
 * Every job it acknowledged must still be there, and no credit may be gone without its job.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../api/harness.js';
import { tempDir } from '../integration/bulk-harness.js';
import { call, contact } from '../sandbox/http-helper.js';
import { readState } from '../sandbox/state-helper.js';
import { recordFigure } from './figures.js';

beforeAll(ensureBuilt, 120_000);

const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));
const CREDITS = 1_000_000;
const KILLS = 20;

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
  url: string;
  key: string;
  admin: string;
}

async function startCli(dir: string): Promise<Running> {
  const child = spawn(
    process.execPath,
    [
      bin,
      'sandbox',
      '--state',
      dir,
      '--port',
      '0',
      '--json',
      '--job-ms',
      '0',
      '--rate-limit',
      '0',
      '--credits',
      String(CREDITS),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the sandbox exited (${code}) before printing`)));
  });
  const info = JSON.parse(line) as { base_url: string; api_key: string; admin_token: string };
  expect(new URL(info.base_url).hostname).toBe('127.0.0.1');
  return { child, exited, url: info.base_url, key: info.api_key, admin: info.admin_token };
}

/**
 * Four clients submit jobs of 1-40 contacts (some out of reach of a match) until the sandbox
 * is killed, which happens synchronously on the `killAfter`-th 200: answers still in flight die.
 */
async function storm(sb: Running, killAfter: number, acked: Set<string>): Promise<number> {
  let answered = 0;
  let next = 0;
  const client = async () => {
    while (!sb.child.killed) {
      const n = 1 + ((next * 7) % 40);
      const contacts = Array.from({ length: n }, (_, i) =>
        contact(next * 100 + i, i % 5 === 0 ? { first_name: 'Nomatch' } : {}),
      );
      next++;
      try {
        const r = await call(sb.url, 'POST', '/contacts', { key: sb.key, body: { contacts } });
        if (r.status !== 200) throw new Error(`POST /contacts: ${r.status} ${r.text}`);
        acked.add(r.json.job_id as string);
        if (++answered >= killAfter && !sb.child.killed) sb.child.kill('SIGKILL');
      } catch (err) {
        if (!sb.child.killed) throw err;
      }
    }
  };
  await Promise.all([client(), client(), client(), client()]);
  await sb.exited;
  return answered;
}

describe('sandbox --state under a SIGKILL storm', () => {
  it(`loses no acknowledged job over ${KILLS} kills right after submissions, and charges nothing without a job`, async () => {
    const dir = await tempDir('sbx-storm-');
    const acked = new Set<string>();
    let first: string | undefined;
    for (let k = 0; k < KILLS; k++) {
      const sb = await startCli(dir);
      first ??= sb.key;
      await storm(sb, 1 + (k % 4), acked);
    }
    const sb = await startCli(dir);
    try {
      // Every acknowledged job downloads, with the key of the first run (keys survive too).
      for (const id of acked) {
        const r = await call(sb.url, 'GET', `/contacts/results/${id}.json`, { key: first });
        expect(r.status, `job ${id}`).toBe(200);
      }
      // Every job kept (acknowledged or not: a kill can fall between the fsync and the answer)
      // paid exactly what its records say; the account lost nothing else.
      const state = readState(dir);
      let charged = 0;
      for (const job of state.jobs) {
        const r = await call(sb.url, 'GET', `/contacts/results/${job.id}.json`, { key: first });
        expect(r.status).toBe(200);
        charged += (r.json.contacts as { credit_charged: boolean }[]).filter(
          (c) => c.credit_charged,
        ).length;
      }
      const account = await call(sb.url, 'GET', `/_sandbox/accounts/${state.accounts[0]?.id}`, {
        key: sb.admin,
      });
      expect(charged).toBeGreaterThan(0);
      expect(CREDITS - account.json.credits).toBe(charged);
      expect(state.jobs.length).toBeGreaterThanOrEqual(acked.size);
      recordFigure('sandbox-sigkill', {
        kills: KILLS,
        acknowledged: acked.size,
        kept: state.jobs.length,
        credits_charged: charged,
      });
    } finally {
      sb.child.kill('SIGTERM');
      await sb.exited;
    }
  }, 60_000);
});
