import { tempEnv } from '../api/harness.js';
import { sandboxForTest, tempDir, type TestEnd } from '../integration/bulk-harness.js';

/**
 * A sandbox for one test whose first POST of contacts is processed and then its connection
 * reset (the run never learns its job: an unconfirmed batch), the CLI's environment for it,
 * and a temp directory.
 */
export async function lostFirstAnswer(t: TestEnd, specOnly: boolean) {
  const sb = await sandboxForTest(t, {
    port: 0,
    host: '127.0.0.1',
    specOnly,
    faults: { next: [{ path: '/contacts', reset: true, after: true }] },
  });
  const env = { ...(await tempEnv()), ENRICH_BASE_URL: sb.url, ENRICH_API_KEY: sb.apiKey };
  return { sb, env, dir: await tempDir() };
}
