import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import { rootTest } from '../helpers/root.js';
import { withTmpfs } from '../helpers/tmpfs.js';
import {
  parseCsv,
  SANDBOX_MODES,
  sandboxForTest,
  tempDir,
  writeCsv,
} from '../integration/bulk-harness.js';

// Regression: `enrich verify-emails list.csv > /full/disk/out.csv` ended the process the
// moment standard output failed (ENOSPC), with requests on their way: the service charged
// them and their answers were lost. The resume then found them "sent and their answer lost:
// the service may have charged them" (exit 3), to be sent again (paid twice) only with
// --resend-unconfirmed. A full disk now stops the run as a closed pipe does: nothing more is
// sent, the requests in flight get their answer (journaled, cached), and it exits 2 saying the
// disk is full; the same command into a file then pays for nothing twice.
beforeAll(ensureBuilt, 120_000);

const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));
const ADDRESSES = 600; // all distinct: the credits charged count them
/** A long cell: the 64 KB disk fills after a few dozen rows, with many requests on their way. */
const NOTE = 'x'.repeat(600);

describe('enrich verify-emails with standard output on a disk that fills up (e2e)', () => {
  rootTest.concurrent.for(
    SANDBOX_MODES.flatMap(({ name, specOnly }) => [
      [`main thread, ${name} sandbox`, '0', specOnly] as const,
      [`worker thread, ${name} sandbox`, '1', specOnly] as const,
    ]),
  )(
    '(root: a tmpfs) %s: exits 2 naming the full disk, and the answers on their way are kept: the resume pays for nothing twice and leaves no "may have been charged" (regression: exit 3, charge unknown)',
    { timeout: 90_000 },
    async ([, worker, specOnly], t) => {
      // Answers take 50 ms: at any moment several requests are on their way.
      const s = await sandboxForTest(t, { specOnly, faults: { latency_ms: 50 } });
      const env = { ...(await tempEnv()), ENRICH_BASE_URL: s.url, ENRICH_API_KEY: s.apiKey };
      const charged = () => s.admin.stats().verification_credits_charged;
      const dir = await tempDir('enrich-verify-full-stdout-');
      const rows = Array.from({ length: ADDRESSES }, (_, i) => [
        `${i}`,
        `p${i}@firm${i}.com`,
        NOTE,
      ]);
      const file = await writeCsv(dir, 'list.csv', ['Id', 'Email', 'Note'], rows);
      await withTmpfs('size=64k', async (small) => {
        const fd = openSync(join(small, 'out.csv'), 'w');
        const child = spawn(process.execPath, [bin, 'verify-emails', file, '--no-progress'], {
          env: { PATH: process.env.PATH ?? '', HOME: dir, ENRICH_WORKER: worker, ...env },
          stdio: ['ignore', fd, 'pipe'],
        });
        closeSync(fd);
        let stderr = '';
        child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        expect(code, stderr).toBe(2);
        expect(stderr).toContain(
          'enrich: cannot write standard output: the disk is full (no space left on the device)',
        );
      });
      expect(charged()).toBeLessThan(ADDRESSES);
      const output = join(dir, 'out.csv');
      const resumed = await runCli(['verify-emails', file, '-o', output, '--no-progress'], {
        env,
      });
      expect(resumed.stderr).not.toContain('may have been charged');
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(charged()).toBe(ADDRESSES);
      const written = parseCsv(await readFile(output, 'utf8')).slice(1);
      expect(written).toHaveLength(ADDRESSES);
    },
  );
});
