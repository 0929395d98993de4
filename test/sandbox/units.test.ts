import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { maskKey as maskCliKey } from '../../src/config/mask-key.js';
import { newBucket, rateLimitHeaders, takeToken } from '../../src/sandbox/rate-limit.js';
import { formatPath, issuesToFieldErrors } from '../../src/sandbox/validation.js';
import {
  bearerProblem,
  bearerToken,
  hashSecret,
  maskKey,
  newApiKey,
  sameHash,
} from '../../src/sandbox/keys.js';
import { parseJsonSafe } from '../../src/sandbox/http.js';
import { bodyHash, canonicalJson } from '../../src/sandbox/canonical.js';
import { matchRoute } from '../../src/sandbox/routes.js';
import { publicBaseUrl } from '../../src/sandbox/public-url.js';

describe('token bucket (injected clock)', () => {
  it('starts full at the burst, refuses when empty, refills at the rate', () => {
    const b = newBucket(4, 0);
    const got = [0, 0, 0, 0, 0].map(() => takeToken(b, 0, 2, 4));
    expect(got.map((r) => r.ok)).toEqual([true, true, true, true, false]);
    expect(got[0]).toEqual({ ok: true, remaining: 3, resetS: 0 });
    expect(got[4]).toEqual({ ok: false, remaining: 0, resetS: 1 });
    expect(takeToken(b, 499, 2, 4).ok).toBe(false);
    expect(takeToken(b, 500, 2, 4).ok).toBe(true);
    // Never above the burst however long it idles.
    const idle = takeToken(b, 1_000_000, 2, 4);
    expect(idle.remaining).toBe(3);
  });

  it('Retry-After is whole seconds, at least 1, even for slow rates', () => {
    const b = newBucket(1, 0);
    takeToken(b, 0, 0.25, 1);
    expect(takeToken(b, 0, 0.25, 1)).toEqual({ ok: false, remaining: 0, resetS: 4 });
    expect(rateLimitHeaders(50, { ok: true, remaining: 7, resetS: 0 })).toEqual({
      'RateLimit-Policy': '"default";q=50;w=1',
      RateLimit: '"default";r=7;t=0',
    });
  });
});

describe('field paths', () => {
  it('formats indices with brackets', () => {
    expect(formatPath(['contacts', 3, 'first_name'])).toBe('contacts[3].first_name');
    expect(formatPath([])).toBe('');
    expect(formatPath([0, 'a'])).toBe('[0].a');
  });

  it('names each unknown key, and the body for root refinements', () => {
    const s = z.strictObject({ a: z.string() }).refine(() => false, 'never');
    const r = s.safeParse({ a: 1, b: 2, c: 3 });
    expect(issuesToFieldErrors(r.error?.issues ?? []).map((e) => e.path)).toEqual(['a', 'b', 'c']);
    const r2 = s.safeParse({ a: 'x' });
    expect(issuesToFieldErrors(r2.error?.issues ?? [])).toEqual([
      { path: '(body)', message: 'never' },
    ]);
  });
});

describe('keys', () => {
  it('are random, stored as SHA-256 hashes, compared in constant time, listed masked', () => {
    const k = newApiKey();
    expect(k).toMatch(/^sk_sbx_[0-9a-f]{32}$/);
    expect(newApiKey()).not.toBe(k);
    expect(hashSecret(k)).toMatch(/^[0-9a-f]{64}$/);
    expect(sameHash(hashSecret(k), hashSecret(k))).toBe(true);
    expect(sameHash(hashSecret(k), hashSecret(`${k}x`))).toBe(false);
    expect(sameHash('', '')).toBe(false);
    expect(maskKey('sk_sbx_abcdefa1b2')).toBe('sk_sbx_…a1b2');
    // Regression: base64url keys with a `_` or `-` early in the random part lost the prefix
    // when masked by the CLI (`…a1b2`); every new key now masks as sk_sbx_…<last 4>.
    for (let i = 0; i < 2000; i++) {
      const key = newApiKey();
      expect(maskCliKey(key)).toBe(`sk_sbx_…${key.slice(-4)}`);
    }
  });

  it('reads bearer tokens only', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer  abc ')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerProblem(undefined)).toMatch(/^no Authorization: Bearer header was sent/);
    expect(bearerProblem('  ')).toMatch(/^the Authorization header is empty/);
    expect(bearerProblem('Basic abc')).toMatch(/is not the Bearer scheme/);
    expect(bearerProblem('sk_sbx_secret')).not.toContain('sk_sbx_secret');
    expect(bearerProblem('bearer')).toMatch(/no key after Bearer/);
    expect(bearerProblem('Bearer a b')).toMatch(/more than one word after Bearer/);
  });
});

describe('safe JSON parsing', () => {
  it('keeps __proto__ as an own key and pollutes no prototype', () => {
    const r = parseJsonSafe(
      '{"__proto__":{"polluted":true},"a":{"constructor":{"prototype":{"p":1}}}}',
    );
    expect(r.ok).toBe(true);
    const v = (r as { value: Record<string, unknown> }).value;
    expect(Object.keys(v)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(v)).toBeNull();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(v)).toBe(
      '{"__proto__":{"polluted":true},"a":{"constructor":{"prototype":{"p":1}}}}',
    );
  });

  it('reports malformed JSON', () => {
    expect(parseJsonSafe('{').ok).toBe(false);
  });
});

describe('canonical body hash', () => {
  it('ignores key order but not values or array order', () => {
    expect(canonicalJson({ b: 1, a: [2, { d: 1, c: 0 }] })).toBe('{"a":[2,{"c":0,"d":1}],"b":1}');
    expect(bodyHash({ a: 1, b: 2 })).toBe(bodyHash({ b: 2, a: 1 }));
    expect(bodyHash({ a: [1, 2] })).not.toBe(bodyHash({ a: [2, 1] }));
  });
});

describe('routes', () => {
  it('matches the seven endpoints, the document and the admin API', () => {
    expect(matchRoute('/contact')).toMatchObject({
      kind: 'service',
      route: 'contact',
      method: 'POST',
    });
    expect(matchRoute('/companies/results/abc%2D1.json')).toMatchObject({
      route: 'companies-results',
      jobId: 'abc-1',
      method: 'GET',
    });
    expect(matchRoute('/openapi.json').kind).toBe('openapi');
    expect(matchRoute('/_sandbox/keys').kind).toBe('admin');
    expect(matchRoute('/toString').kind).toBe('none');
    expect(matchRoute('/contacts/results/x').kind).toBe('none');
  });
});

describe('publicBaseUrl (the address put in download_url)', () => {
  it('keeps the base URL of a specific interface whatever the Host header says', () => {
    expect(publicBaseUrl('http://127.0.0.1:4010', 'evil.example:80')).toBe('http://127.0.0.1:4010');
    expect(publicBaseUrl('http://[::1]:4010', 'localhost:4010')).toBe('http://[::1]:4010');
  });

  it('on 0.0.0.0 or :: uses the Host header the client reached the sandbox by', () => {
    expect(publicBaseUrl('http://0.0.0.0:4010', 'localhost:4010')).toBe('http://localhost:4010');
    expect(publicBaseUrl('http://0.0.0.0:4010', 'Sandbox.Internal:8080')).toBe(
      'http://sandbox.internal:8080',
    );
    expect(publicBaseUrl('http://0.0.0.0:4010', '10.0.0.5:4010')).toBe('http://10.0.0.5:4010');
    expect(publicBaseUrl('http://0.0.0.0:4010', 'ci-runner')).toBe('http://ci-runner');
    expect(publicBaseUrl('http://[::]:4010', '[::1]:4010')).toBe('http://[::1]:4010');
    expect(publicBaseUrl('http://[::]:4010', '[fe80::1%25eth0]:4010')).toBe('http://[::]:4010');
  });

  it.each([
    undefined,
    '',
    'a b:4010',
    'evil.example/x',
    'user@evil.example',
    'evil.example:99999',
    'evil.example:0',
    'evil.example:80:80',
    'evil.example:',
    'evil.example?x',
    'evil.example#x',
    '[::1',
    'a..b',
    '-a.example',
    'a_b.example',
    `${'a'.repeat(64)}.example`,
    `${'a.'.repeat(130)}example`,
    'evil.example\\x',
  ])('on 0.0.0.0 falls back to the base URL for a Host of %j', (host) => {
    expect(publicBaseUrl('http://0.0.0.0:4010', host)).toBe('http://0.0.0.0:4010');
  });
});
