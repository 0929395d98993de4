import { afterEach, describe, expect, it } from 'vitest';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { call } from '../sandbox/http-helper.js';
import { stateFile } from '../sandbox/state-helper.js';

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const YEAR = 365.25 * 24 * 3_600_000;
const BASE = Date.UTC(2026, 0, 1);

async function advance(s: SandboxHandle, raw: string) {
  return call(s.url, 'POST', '/_sandbox/clock', { key: s.adminToken, raw });
}

describe('sandbox admin inputs are range-checked', () => {
  it.each([
    ['1e400', 'non-finite'],
    ['1.5', 'not an integer'],
    [String(11 * YEAR), 'past 10 years'],
    [String(-11 * YEAR), 'past 10 years back'],
    [String(-BASE - 1), 'below epoch 0'],
    ['"5"', 'a string'],
  ])('POST /_sandbox/clock {advance_ms: %s} (%s) is a 400 and leaves the clock', async (v) => {
    sb = await startSandbox({ now: () => BASE });
    const r = await advance(sb, `{"advance_ms":${v}}`);
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/advance_ms/);
    const c = await call(sb.url, 'GET', '/_sandbox/clock', { key: sb.adminToken });
    expect(c.status).toBe(200);
    expect(c.json.offset_ms).toBe(0);
  });

  it('accepts a valid advance, forward and back, and the in-process admin refuses the same', async () => {
    sb = await startSandbox({ now: () => BASE });
    expect((await advance(sb, `{"advance_ms":${9 * YEAR}}`)).status).toBe(200);
    expect((await advance(sb, `{"advance_ms":${-9 * YEAR}}`)).json.offset_ms).toBe(0);
    expect(() => sb?.admin.advanceClock(Number.NaN)).toThrow(/advance_ms/);
    expect(() => sb?.admin.advanceClock(20 * YEAR)).toThrow(/advance_ms/);
  });

  it.each([-1, 1.5, Number.MAX_SAFE_INTEGER + 2])(
    'credits %s are a 400 on create and update',
    async (n) => {
      sb = await startSandbox();
      const raw = `{"credits":${n}}`;
      const a = await call(sb.url, 'POST', '/_sandbox/accounts', { key: sb.adminToken, raw });
      const b = await call(sb.url, 'PUT', `/_sandbox/accounts/${sb.accountId}`, {
        key: sb.adminToken,
        raw: `{"verification_credits":${n}}`,
      });
      expect([a.status, b.status]).toEqual([400, 400]);
    },
  );

  it('startSandbox refuses fractional or unsafe credits', async () => {
    await expect(startSandbox({ credits: 1.5 })).rejects.toThrow(/credits/);
    await expect(startSandbox({ verificationCredits: 2 ** 60 })).rejects.toThrow(/credits/i);
  });

  it('a state saved with an absurd clock still starts, on an offset of 0, and GET clock answers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sbx-clock-'));
    try {
      const first = await startSandbox({ stateDir: dir, now: () => BASE });
      await first.close();
      for (const bad of [1e300, -BASE * 2, 'soon']) {
        appendFileSync(stateFile(dir), `${JSON.stringify({ t: 'clock', offset: bad })}\n`);
        sb = await startSandbox({ stateDir: dir, now: () => BASE });
        const c = await call(sb.url, 'GET', '/_sandbox/clock', { key: sb.adminToken });
        expect(c.status).toBe(200);
        expect(c.json).toMatchObject({ offset_ms: 0, now_ms: BASE });
        await sb.close();
        sb = undefined;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
