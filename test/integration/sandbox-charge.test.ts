import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { call, contact } from '../sandbox/http-helper.js';

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

/** JSON text of a value nested `depth` objects deep (too deep for JSON.stringify's recursion). */
function deepJson(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

describe('sandbox: no charge without a job', () => {
  it.each([false, true])(
    'a bulk POST answered 500 (custom_fields too deep to serialise) charges nothing (specOnly %s)',
    async (specOnly) => {
      sb = await startSandbox({ credits: 10, specOnly });
      const head = JSON.stringify({ contacts: [contact(0, { custom_fields: {} })] });
      const raw = head.replace('"custom_fields":{}', `"custom_fields":${deepJson(20_000)}`);
      const r = await call(sb.url, 'POST', '/contacts', { key: sb.apiKey, raw });
      expect(r.status).toBe(500);
      expect(sb.admin.stats()).toMatchObject({ jobs_submitted: 0, credits_charged: 0 });
      expect(sb.admin.getAccount(sb.accountId)?.credits).toBe(10);
      const ok = await call(sb.url, 'POST', '/contacts', {
        key: sb.apiKey,
        body: { contacts: [contact(1)] },
      });
      expect(ok.json.remaining_credits).toBe(9);
    },
  );
});
