import { tempEnv } from '../api/harness.js';
import { sandboxForTest, tempDir, type TestEnd } from '../integration/bulk-harness.js';
import type { Faults } from '../../src/sandbox/types.js';

/**
 * A sandbox for one test with `faults`, the CLI's environment for it (its key, and config,
 * state and cache dirs of its own), and a temp directory.
 */
export async function faultyService(t: TestEnd, specOnly: boolean, faults: Faults) {
  const sb = await sandboxForTest(t, { port: 0, host: '127.0.0.1', specOnly, faults });
  const env: Record<string, string> = {
    ...(await tempEnv()),
    ENRICH_BASE_URL: sb.url,
    ENRICH_API_KEY: sb.apiKey,
  };
  return { sb, env, dir: await tempDir() };
}

/**
 * A service whose first POST of contacts is processed and then its connection reset (the run
 * never learns its job: an unconfirmed batch).
 */
export function lostFirstAnswer(t: TestEnd, specOnly: boolean) {
  return faultyService(t, specOnly, { next: [{ path: '/contacts', reset: true, after: true }] });
}
