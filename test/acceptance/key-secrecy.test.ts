import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { ensureBuilt, runCli, type CliResult } from '../api/harness.js';
import {
  CONTACT_HEADER,
  contactRows,
  parseCsv,
  tempDir,
  writeCsv,
} from '../integration/bulk-harness.js';
import { recordFigure } from './figures.js';
import { startProxy, startRecorder, type Recorder } from './proxy.js';

let sb: SandboxHandle;
let root: string;
let env: Record<string, string>;
let key: { id: string; api_key: string };
const outputs: (CliResult & { args: string[] })[] = [];
const servers: Recorder[] = [];

beforeAll(async () => {
  await ensureBuilt();
  sb = await startSandbox({ port: 0 });
  key = sb.admin.createKey({ name: 'secret-scan' });
  root = await tempDir('enrich-secrecy-');
  env = { ENRICH_CONFIG_DIR: join(root, 'config'), ENRICH_STATE_DIR: join(root, 'state') };
}, 120_000);
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await sb.close();
});

/** Runs the CLI in this suite's config/state dirs and keeps everything it printed for the scan. */
async function cli(args: string[], o: { input?: string; env?: Record<string, string> } = {}) {
  const r = await runCli(args, { env: { ...env, ...o.env }, input: o.input });
  outputs.push({ ...r, args });
  return r;
}

const mode = (p: string) => statSync(p).mode & 0o777;

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe('the API key stays secret (acceptance)', () => {
  it('config file is 0600 in a 0700 dir after login, and still after config set', async () => {
    const login = await cli(['auth', 'login', '--base-url', sb.url, '--debug'], {
      input: `${key.api_key}\n`,
    });
    expect(login.code).toBe(0);
    const file = join(env.ENRICH_CONFIG_DIR as string, 'config.json');
    expect([mode(file), mode(dirname(file))]).toEqual([0o600, 0o700]);
    for (const [k, v] of [
      ['batch_size', '50'],
      ['concurrency', '2'],
      ['formula_escape', 'auto'],
    ]) {
      expect((await cli(['config', 'set', k as string, v as string])).code).toBe(0);
      expect([mode(file), mode(dirname(file))]).toEqual([0o600, 0o700]);
    }
    expect((await cli(['config', 'unset', 'concurrency'])).code).toBe(0);
    expect([mode(file), mode(dirname(file))]).toEqual([0o600, 0o700]);
    expect((await cli(['config', 'list'])).code).toBe(0);
    expect((await cli(['auth', 'status', '--json'])).code).toBe(0);
  });

  it('a bulk run with --debug, its jobs, a lookup and a revoked key leak nothing', async () => {
    const dir = join(root, 'work');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(dir);
    const file = await writeCsv(
      dir,
      'in.csv',
      CONTACT_HEADER,
      contactRows(120, { dupEvery: 7, invalidEvery: 30 }),
    );
    const run = await cli([
      'contacts',
      file,
      '-o',
      join(dir, 'out.csv'),
      '--debug',
      '--rejects',
      join(dir, 'rejects.csv'),
    ]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/debug: POST \/contacts/);
    expect(
      (await cli(['contacts', file, '-o', join(dir, 'out.json'), '--json', '--debug'])).code,
    ).toBe(0);
    const list = await cli(['jobs', 'list', '--json']);
    const id = (JSON.parse(list.stdout) as { job_id: string }[])[0]?.job_id as string;
    expect((await cli(['jobs', 'show', id, '--json'])).code).toBe(0);
    expect((await cli(['jobs', 'fetch', id, '-o', join(dir, 'job.csv'), '--debug'])).code).toBe(0);
    expect((await cli(['contact', '--email', 'jane@acme.com', '--debug', '--json'])).code).toBe(0);
    expect((await cli(['verify-email', 'jane@acme.com', '--debug'])).code).toBe(0);
    // A dry run saving its mapping, then a key revoked mid-way: errors must not quote the key.
    expect(
      (await cli(['contacts', file, '--dry-run', '--save-mapping', join(dir, 'map.json')])).code,
    ).toBe(0);
    sb.admin.revokeKey(key.id);
    const revoked = await cli([
      'contacts',
      file,
      '-o',
      join(dir, 'again.csv'),
      '--restart',
      // The cache would answer every row without a request (the same key's answers).
      '--no-cache',
      '--debug',
    ]);
    expect(revoked.code).toBe(4);
    expect((await cli(['contact', '--email', 'bob@acme.com', '--debug'])).code).toBe(4);
    expect((await cli(['auth', 'status'])).code).not.toBe(0);
  });

  it('is never sent to another origin: not to a foreign download_url, not on a redirect', async () => {
    const fresh = sb.admin.createKey({ name: 'origin' });
    const foreign = await startRecorder();
    servers.push(foreign);
    // A service whose jobs point their results at another origin.
    const rewriting = await startProxy(sb.url, {
      rewrite: (path, _status, body) =>
        /^\/contacts$/.test(path) && body && typeof body === 'object'
          ? { ...body, download_url: `${foreign.url}/steal/results.json` }
          : undefined,
    });
    servers.push(rewriting);
    const dir = await tempDir('enrich-origin-');
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(30));
    const r = await cli(['contacts', file, '-o', join(dir, 'out.csv'), '--debug'], {
      env: { ENRICH_BASE_URL: rewriting.url, ENRICH_API_KEY: fresh.api_key },
    });
    expect(r.code).toBe(0);
    expect(
      parseCsv(readFileSync(join(dir, 'out.csv'), 'utf8')).filter((x) => x.includes('enriched')),
    ).toHaveLength(30);
    // A service that redirects every call to another origin.
    const redirecting = await startProxy(sb.url, {
      redirect: (_m, path) => `${foreign.url}${path}`,
    });
    servers.push(redirecting);
    const env2 = { ENRICH_BASE_URL: redirecting.url, ENRICH_API_KEY: fresh.api_key };
    const one = await cli(['contact', '--email', 'jane@acme.com', '--debug'], { env: env2 });
    expect(one.code).not.toBe(0);
    expect(one.code).not.toBe(1);
    expect(one.stderr).toMatch(/redirects are not followed/);
    const bulk = await cli(['contacts', file, '-o', join(dir, 'out2.csv'), '--debug'], {
      env: env2,
    });
    expect([3, 6]).toContain(bulk.code);
    expect(foreign.seen).toEqual([]);
    expect(redirecting.seen.length).toBeGreaterThan(0);
    recordFigure('origin', {
      foreign_requests: foreign.seen.length,
      redirects_refused: redirecting.seen.length,
    });
  });

  it('a key saved for one service is not sent to a --base-url or ENRICH_BASE_URL on another origin (regression: sent)', async () => {
    // The first test saved the key with --base-url sb.url.
    const foreign = await startRecorder();
    servers.push(foreign);
    const dir = await tempDir('enrich-saved-origin-');
    const file = await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(3));
    const runs: { args: string[]; env: Record<string, string> }[] = [
      { args: ['contact', '--email', 'jane@acme.com', '--base-url', foreign.url], env: {} },
      { args: ['verify-email', 'jane@acme.com'], env: { ENRICH_BASE_URL: foreign.url } },
      {
        args: ['contacts', file, '-o', join(dir, 'out.csv')],
        env: { ENRICH_BASE_URL: foreign.url },
      },
      { args: ['auth', 'status'], env: { ENRICH_BASE_URL: foreign.url } },
    ];
    for (const run of runs) {
      const r = await cli([...run.args, '--debug'], { env: run.env });
      expect(r.code).toBe(4);
      // auth status says it in its check line, the others in the error.
      expect(`${r.stdout}${r.stderr}`).toMatch(/saved (one is )?for http:\/\/127\.0\.0\.1:\d+/);
      expect(`${r.stdout}${r.stderr}`).toContain(new URL(sb.url).origin);
    }
    expect(foreign.seen).toEqual([]);
    // The origin it was saved for, another path or a trailing slash aside, still gets it.
    const same = await cli(['verify-email', 'jane@acme.com', '--base-url', `${sb.url}/`]);
    expect([same.code, same.stdout.split('\n')[0]]).toEqual([0, 'valid']);
  });

  it('the key appears nowhere: stdout, stderr, --debug logs, journal, spools, outputs, mappings, error messages', () => {
    const secrets = [key.api_key, key.api_key.slice('sk_sbx_'.length)];
    expect(outputs.length).toBeGreaterThanOrEqual(18);
    for (const r of outputs)
      for (const s of secrets) {
        expect(r.stdout, r.args.join(' ')).not.toContain(s);
        expect(r.stderr, r.args.join(' ')).not.toContain(s);
      }
    const config = join(env.ENRICH_CONFIG_DIR as string, 'config.json');
    const files = filesUnder(root);
    const scanned = files.filter((f) => f !== config);
    expect(scanned.some((f) => f.endsWith('journal.jsonl') || f.includes('/runs/'))).toBe(true);
    for (const f of scanned) {
      const text = readFileSync(f).toString('latin1');
      for (const s of secrets) expect(text.includes(s), f).toBe(false);
    }
    recordFigure('secrecy', { commands: outputs.length, files_scanned: scanned.length });
  });
});

describe('formula escaping of service values (acceptance)', () => {
  it('escapes formulas the service returns in CSV, keeps +18005551234 and numbers intact, and input cells as read', async () => {
    const evil: Record<string, string> = {
      title: '=HYPERLINK("http://evil.example","Click")',
      department: '@SUM(A1:A9)',
      office_phone: '+18005551234',
      mobile_phone: '+1 (415) 555-0100',
      location_state: '\t=cmd',
      location_zip_code: '-12.5',
      company_name: '+Acme',
      company_description: "-2+3+cmd|' /C calc'!A0",
    };
    const proxy = await startProxy(sb.url, {
      rewrite: (path, status, body) => {
        if (!/results/.test(path) || status !== 200) return undefined;
        const b = body as { contacts: Record<string, unknown>[] };
        return {
          ...b,
          contacts: b.contacts.map((c) => ({
            ...c,
            title: evil.title,
            department: evil.department,
            office_phone: evil.office_phone,
            mobile_phone: evil.mobile_phone,
            location: {
              ...(c.location as object),
              state: evil.location_state,
              zip_code: evil.location_zip_code,
            },
            company: {
              ...(c.company as object),
              name: evil.company_name,
              description: evil.company_description,
            },
          })),
        };
      },
    });
    servers.push(proxy);
    const k = sb.admin.createKey({ name: 'formula', account_id: sb.accountId });
    const dir = await tempDir('enrich-formula-');
    const file = await writeCsv(
      dir,
      'in.csv',
      ['Email', 'Notes'],
      [
        ['jane@acme.com', '=1+1'],
        ['bob@acme.com', '+33 1 23'],
      ],
    );
    const e = { ENRICH_BASE_URL: proxy.url, ENRICH_API_KEY: k.api_key };
    const r = await cli(['contacts', file, '-o', join(dir, 'out.csv')], { env: e });
    expect(r.code).toBe(0);
    const rows = parseCsv(readFileSync(join(dir, 'out.csv'), 'utf8'));
    const head = rows[0] as string[];
    const cell = (row: number, name: string) => rows[row]?.[head.indexOf(name)];
    expect(cell(1, 'Notes')).toBe('=1+1'); // input written back exactly as read
    expect(cell(1, 'enriched_title')).toBe(`'${evil.title}`);
    expect(cell(1, 'enriched_department')).toBe(`'${evil.department}`);
    expect(cell(1, 'enriched_location_state')).toBe(`'${evil.location_state}`);
    expect(cell(1, 'enriched_company_name')).toBe(`'${evil.company_name}`);
    expect(cell(1, 'enriched_company_description')).toBe(`'${evil.company_description}`);
    expect(cell(1, 'enriched_office_phone')).toBe('+18005551234');
    expect(cell(1, 'enriched_mobile_phone')).toBe('+1 (415) 555-0100');
    expect(cell(1, 'enriched_location_zip_code')).toBe('-12.5');
    // --formula-escape never writes them raw; JSON output is data, never escaped.
    await cli(['contacts', file, '-o', join(dir, 'raw.csv'), '--formula-escape', 'never'], {
      env: e,
    });
    const raw = parseCsv(readFileSync(join(dir, 'raw.csv'), 'utf8'));
    expect(raw[1]?.[head.indexOf('enriched_title')]).toBe(evil.title);
  });
});
