import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, tempEnv } from '../api/harness.js';
import {
  CONTACT_HEADER,
  contactRows,
  SANDBOX_MODES,
  sandboxForTest,
  tempDir,
  writeCsv,
} from '../integration/bulk-harness.js';

beforeAll(ensureBuilt, 120_000);

const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));

/** Runs the CLI with its stdout appended to `stdoutFile` (`enrich … >> stdoutFile`). */
function runAppending(
  args: string[],
  env: Record<string, string>,
  stdoutFile: string,
): Promise<{ code: number | null; stderr: string }> {
  const fd = openSync(stdoutFile, 'a');
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', fd, 'pipe'],
  });
  closeSync(fd);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((done) => child.on('close', (code) => done({ code, stderr })));
}

describe.concurrent.for(SANDBOX_MODES)(
  'stdout appended to the input file itself ($name sandbox)',
  ({ specOnly }) => {
    it.concurrent.for([['contacts'], ['verify-emails']] as const)(
      '%s is refused before anything is sent, and the input is left as it was',
      async ([command], t) => {
        const sb = await sandboxForTest(t, { specOnly });
        const env = { ...(await tempEnv()), ENRICH_BASE_URL: sb.url, ENRICH_API_KEY: sb.apiKey };
        const file = await writeCsv(await tempDir(), 'in.csv', CONTACT_HEADER, contactRows(3));
        const before = readFileSync(file, 'utf8');
        const r = await runAppending([command, file, '--quiet'], env, file);
        expect(r.stderr).toMatch(/standard output is the input file .*in\.csv/);
        expect(r.code).toBe(2);
        expect(readFileSync(file, 'utf8')).toBe(before);
        const stats = sb.admin.stats();
        expect([stats.records_submitted, stats.verification_credits_charged]).toEqual([0, 0]);
      },
    );
  },
);
