import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ensureBuilt, runCli, tempEnv } from '../api/harness.js';
import { CONTACT_HEADER, contactRows, tempDir, writeCsv } from '../integration/bulk-harness.js';

beforeAll(ensureBuilt, 120_000);

/** Each test has its own files and dirs (and `--sandbox`, its own service): two at a time. */
vi.setConfig({ maxConcurrency: 2 });

/** A small contacts file (every row valid) in a fresh directory. */
async function contacts(): Promise<{ dir: string; file: string }> {
  const dir = await tempDir('enrich-ignored-');
  return { dir, file: await writeCsv(dir, 'in.csv', CONTACT_HEADER, contactRows(6)) };
}

/** `enrich <args> --sandbox --no-progress` with fresh config, state and cache dirs. */
async function run(args: string[]) {
  return runCli([...args, '--sandbox', '--no-progress'], { env: await tempEnv() });
}

const BOM = 0xfeff;

describe.concurrent('--output-delimiter and --bom where the output has no use for them', () => {
  it('contacts -o out.json: one warning for each, exit 0, the output as without them', async () => {
    const { dir, file } = await contacts();
    const out = join(dir, 'out.json');
    const r = await run(['contacts', file, '-o', out, '--output-delimiter', ';', '--bom']);
    expect(r.code, r.stderr).toBe(0);
    const warned = r.stderr.split('\n').filter((l) => l.includes('does nothing'));
    expect(warned).toEqual([
      `enrich: warning: --output-delimiter does nothing for JSON output (${out}): only a CSV or TSV output has a delimiter; ignored`,
      `enrich: warning: --bom does nothing for JSON output (${out}): only a CSV or TSV output starts with a BOM; ignored`,
    ]);
    const plain = join(dir, 'plain.json');
    const p = await run(['contacts', file, '-o', plain]);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stderr).not.toMatch(/does nothing/);
    const written = await readFile(out, 'utf8');
    expect(written.charCodeAt(0)).toBe('['.charCodeAt(0));
    expect(written).toBe(await readFile(plain, 'utf8'));
    expect((JSON.parse(written) as { status: string }[]).map((o) => o.status)).toEqual(
      Array(6).fill('enriched'),
    );
  });

  it('contacts -o out.xlsx --bom: warned in the dry run and the run; the workbook has no BOM', async () => {
    const { dir, file } = await contacts();
    const out = join(dir, 'out.xlsx');
    const warning = `--bom does nothing for Excel output (${out})`;
    const dry = await run(['contacts', file, '-o', out, '--bom', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(`enrich: warning: ${warning}`);
    expect(dry.stdout).toMatch(/^rows\s+6$/m);
    const r = await run(['contacts', file, '-o', out, '--bom']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split(warning)).toHaveLength(2); // said once
    expect(r.stderr).not.toMatch(/--output-delimiter/);
    // A ZIP archive from its first byte, as without --bom.
    expect((await readFile(out)).subarray(0, 4)).toEqual(Buffer.from('PK\x03\x04', 'latin1'));
  });

  it('verify-emails --format jsonl to stdout and --dry-run -o out.json: warned, exit 0, the rows as without it', async () => {
    const { dir, file } = await contacts();
    const r = await run(['verify-emails', file, '--format', 'jsonl', '--output-delimiter', 'tab']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'enrich: warning: --output-delimiter does nothing for JSON Lines output (stdout): only a CSV or TSV output has a delimiter; ignored',
    );
    const plain = await run(['verify-emails', file, '--format', 'jsonl']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).not.toMatch(/does nothing/);
    expect(r.stdout).toBe(plain.stdout);
    expect(r.stdout.trim().split('\n')).toHaveLength(6);
    const out = join(dir, 'verified.json');
    const dry = await run(['verify-emails', file, '-o', out, '--bom', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(`enrich: warning: --bom does nothing for JSON output (${out})`);
    expect(dry.stdout).toMatch(/^email column: "Email"$/m);
  });

  it('says nothing of them for a CSV output, where both are honoured', async () => {
    const { dir, file } = await contacts();
    const out = join(dir, 'out.csv');
    const r = await run(['contacts', file, '-o', out, '--output-delimiter', ';', '--bom']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/warning/);
    const text = await readFile(out, 'utf8');
    expect(text.charCodeAt(0)).toBe(BOM);
    expect(text.slice(1).split('\n')[0]).toMatch(/^Contact ID;First Name;.*;enrich_status;/);
    const verified = join(dir, 'verified.csv');
    const v = await run([
      'verify-emails',
      file,
      '-o',
      verified,
      '--output-delimiter',
      '|',
      '--bom',
    ]);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stderr).not.toMatch(/warning/);
    const vText = await readFile(verified, 'utf8');
    expect(vText.charCodeAt(0)).toBe(BOM);
    expect(vText.slice(1).split('\n')[0]).toMatch(/^Contact ID\|First Name\|.*\|verify_status\|/);
  });
});
