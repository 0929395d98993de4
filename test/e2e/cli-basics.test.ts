import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';

beforeAll(ensureBuilt, 120_000);

const bin = fileURLToPath(new URL('../../bin/enrich.js', import.meta.url));

describe('the enrich program (e2e)', () => {
  it('prints its version and a help with examples and every command', async () => {
    const env = await tempEnv();
    const version = await runCli(['--version'], { env });
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const help = await runCli(['--help'], { env });
    expect(help.code).toBe(0);
    for (const cmd of [
      'contacts',
      'companies',
      'contact',
      'company',
      'verify-email',
      'jobs',
      'auth',
      'config',
      'sandbox',
    ]) {
      expect(help.stdout).toMatch(new RegExp(`^\\s+${cmd}\\b`, 'm'));
    }
    expect(help.stdout).toContain('Examples:');
  });

  it('exits quietly when the reader of stdout goes away (enrich --help | head -1)', async () => {
    const child = spawn(process.execPath, [bin, 'contacts', '--help'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toMatch(/EPIPE|at .*\.js/);
    expect(code).toBe(0);
  });

  it('refuses an unknown command or option with exit 2', async () => {
    const env = await tempEnv();
    expect((await runCli(['frobnicate'], { env })).code).toBe(2);
    const r = await runCli(['contacts', 'x.csv', '--no-such-flag'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown option '--no-such-flag'/);
  });
});
