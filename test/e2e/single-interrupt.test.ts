import { createServer, connect, type AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, spawnCli, tempEnv } from '../api/harness.js';
import { sandboxForTest, type TestEnd } from '../integration/bulk-harness.js';

beforeAll(ensureBuilt, 120_000);

/**
 * A TCP proxy in front of the sandbox that sees a POST arrive (the sandbox counts a request
 * only once it answers, after its latency): `posted()` is true once the lookup is on its way.
 */
async function watchPosts(t: TestEnd, target: string) {
  const port = Number(new URL(target).port);
  let posted = false;
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    client.on('data', (chunk: Buffer) => {
      if (chunk.toString('latin1').startsWith('POST ')) posted = true;
    });
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.onTestFinished(() => void server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const untilPosted = async () => {
    while (!posted) await new Promise((r) => setTimeout(r, 10));
  };
  return { url, untilPosted };
}

// Regression: a Ctrl-C while `enrich contact` waited for its answer ended it at once (exit 130,
// nothing said), though the service may have charged the request on its way.
describe.concurrent('Ctrl-C during a single lookup (e2e)', () => {
  it('the first lets the answer on its way arrive: shown, cached (the same lookup then pays nothing), exit 130', async (t) => {
    const s = await sandboxForTest(t, { faults: { latency_ms: 1500 } });
    const proxy = await watchPosts(t, s.url);
    const env = { ...(await tempEnv()), ENRICH_BASE_URL: proxy.url, ENRICH_API_KEY: s.apiKey };
    const lookup = ['contact', '--email', 'jane@acme.com'];
    const { child, out, code } = await spawnCli(lookup, { env });
    await proxy.untilPosted();
    child.kill('SIGINT');
    expect(await code).toBe(130);
    expect(out.stderr).toContain(
      'enrich: stopping: a request on its way gets its answer, which may be charged (Ctrl-C again to quit at once)',
    );
    expect(out.stderr).toContain('enrich: interrupted; the answer that was on its way is shown');
    expect(out.stdout).toMatch(/^credit_charged\s+true$/m);
    expect(s.admin.stats().credits_charged).toBe(1);
    const again = await runCli(lookup, { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(out.stdout);
    expect(s.admin.stats().credits_charged).toBe(1);
  });

  it('a second quits at once, saying the request may still be charged', async (t) => {
    const s = await sandboxForTest(t, { faults: { latency_ms: 1500 } });
    const proxy = await watchPosts(t, s.url);
    const env = { ...(await tempEnv()), ENRICH_BASE_URL: proxy.url, ENRICH_API_KEY: s.apiKey };
    const { child, out, code } = await spawnCli(['verify-email', 'jane@acme.com'], { env });
    await proxy.untilPosted();
    child.kill('SIGINT');
    while (!out.stderr.includes('stopping')) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGINT');
    expect(await code).toBe(130);
    expect(out.stderr).toContain('enrich: quit; a request on its way may still be charged');
    expect(out.stdout).toBe('');
  });
});
