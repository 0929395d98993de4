import { describe, expect, it } from 'vitest';
import { spawn, execFile } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { call } from '../sandbox/http-helper.js';

const BIN = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));
const run = promisify(execFile);

/** Runs `enrich ...args` to completion. */
async function enrich(args: string[], env: Record<string, string> = {}) {
  try {
    const r = await run(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('enrich sandbox (e2e)', () => {
  it('prints one JSON line, serves, manages keys, and exits 0 on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'sandbox', '--port', '0', '--json', '--job-ms', '0'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        child.once('exit', () => reject(new Error('sandbox exited before printing')));
      });
      const info = JSON.parse(line) as { base_url: string; api_key: string; admin_token: string };
      expect(Object.keys(info).sort()).toEqual(['admin_token', 'api_key', 'base_url']);
      expect(info.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

      const c = await call(info.base_url, 'POST', '/contact', {
        key: info.api_key,
        body: { business_email: 'jane.doe@acme.com' },
      });
      expect(c.status).toBe(200);
      expect(c.json.contact.first_name).toBe('Jane');

      const env = {
        ENRICH_SANDBOX_URL: info.base_url,
        ENRICH_SANDBOX_ADMIN_TOKEN: info.admin_token,
      };
      const created = await enrich(['sandbox', 'keys', 'create', '--name', 'ci', '--json'], env);
      expect(created.code).toBe(0);
      const key = JSON.parse(created.stdout) as { id: string; api_key: string; name: string };
      expect(key.name).toBe('ci');
      expect(
        (
          await call(info.base_url, 'POST', '/email-verification', {
            key: key.api_key,
            body: { email: 'a@b.co' },
          })
        ).status,
      ).toBe(200);

      const listed = await enrich([
        'sandbox',
        'keys',
        'list',
        '--url',
        info.base_url,
        '--admin-token',
        info.admin_token,
      ]);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/^ID\s+KEY\s+STATUS/);
      expect(listed.stdout).toContain(key.id);
      expect(listed.stdout).not.toContain(key.api_key);

      const revoked = await enrich(['sandbox', 'keys', 'revoke', key.id], env);
      expect(revoked.code).toBe(0);
      expect(
        (
          await call(info.base_url, 'POST', '/email-verification', {
            key: key.api_key,
            body: { email: 'a@b.co' },
          })
        ).status,
      ).toBe(401);
      expect((await enrich(['sandbox', 'keys', 'list', '--json'], env)).stdout).toContain(
        '"revoked": true',
      );

      const noToken = await enrich(['sandbox', 'keys', 'list', '--url', info.base_url], {
        ENRICH_SANDBOX_ADMIN_TOKEN: '',
      });
      expect(noToken.code).toBe(2);
      expect(noToken.stderr).toContain('admin token');
      const badToken = await enrich(['sandbox', 'keys', 'list'], {
        ...env,
        ENRICH_SANDBOX_ADMIN_TOKEN: 'wrong',
      });
      expect(badToken.code).toBe(4);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it('refuses bad flags with exit 2 and a message naming the flag', async () => {
    const r = await enrich(['sandbox', '--port', '0', '--faults', 'teapot=1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('teapot');
    const t = await enrich(['sandbox', '--port', '0', '--ttl', 'soon']);
    expect(t.code).toBe(2);
    expect(t.stderr).toContain('--ttl');
  });
});
