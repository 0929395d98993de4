import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { afterEach } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toBulkApi } from '../../src/api/bulk-api.js';
import { createClient, type EnrichClient } from '../../src/api/client.js';
import { openInput, type InputSource } from '../../src/io/read.js';
import type { BulkApi } from '../../src/pipeline/run/batch-task.js';
import { resolveMapping } from '../../src/pipeline/run/plan.js';
import { runBulk, type RunOptions, type RunSummary } from '../../src/pipeline/run/run.js';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';

/** Call once in a test file: starts a sandbox for a test on 127.0.0.1 port 0, closed after it. */
export function sandboxPerTest(): (o?: SandboxOptions) => Promise<SandboxHandle> {
  let sb: SandboxHandle | undefined;
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
  });
  return async (o = {}) => (sb = await startSandbox({ port: 0, ...o }));
}

/** A fresh temp directory. */
export function tempDir(prefix = 'enrich-bulk-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Deterministic contact rows: every `dupEvery`-th row repeats an earlier one, `invalidEvery`-th lacks identifiers. */
export function contactRows(
  n: number,
  o: { dupEvery?: number; invalidEvery?: number; noMatchEvery?: number } = {},
): string[][] {
  const rows: string[][] = [];
  for (let i = 0; i < n; i++) {
    const id = `R${String(i).padStart(6, '0')}`;
    if (o.invalidEvery && i % o.invalidEvery === o.invalidEvery - 1) {
      rows.push([id, 'Only', '', '', '', `note ${i}`]);
      continue;
    }
    const j = o.dupEvery && i % o.dupEvery === o.dupEvery - 1 ? i - 1 : i;
    const first = j % 7 === 0 ? 'Zoë' : `First${j}`;
    const local = o.noMatchEvery && j % o.noMatchEvery === 0 ? `nomatch${j}` : `person${j}`;
    rows.push([
      id,
      first,
      `Last${j}`,
      `${local}@company${j % 97}.com`,
      `Company ${j % 97}, Inc.`,
      `note, "quoted" ${i}`,
    ]);
  }
  return rows;
}

/** Writes a CSV with a header and rows, quoting as needed. */
export async function writeCsv(
  dir: string,
  name: string,
  header: string[],
  rows: string[][],
): Promise<string> {
  const quote = (c: string) => (/[",\r\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c);
  const text = [header, ...rows].map((r) => r.map(quote).join(',')).join('\r\n') + '\r\n';
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

export const CONTACT_HEADER = [
  'Contact ID',
  'First Name',
  'Last Name',
  'Email',
  'Company',
  'Notes',
];

/** A client that never really sleeps between retries. */
export function fastClient(sb: SandboxHandle, apiKey = sb.apiKey): EnrichClient {
  return createClient({ baseUrl: sb.url, apiKey, sleep: async () => {}, random: () => 0.5 });
}

export interface HarnessRun {
  summary: RunSummary;
  output: string;
  outputPath: string;
}

/**
 * Runs a bulk enrichment of `file` against the sandbox, with instant polling; or, with
 * `api` and no sandbox, against that fake service.
 */
export async function runFile(
  sb: SandboxHandle | undefined,
  file: string,
  o: Partial<Omit<RunOptions, 'output'>> & {
    kind?: 'contacts' | 'companies';
    runsDir: string;
    outputPath?: string;
    output?: Partial<RunOptions['output']>;
    client?: EnrichClient;
    api?: BulkApi;
    onSleep?: (ms: number) => void;
    /** Stands in for the opened input (to watch what the run asks of it). */
    wrapSource?: (source: InputSource) => InputSource;
  },
): Promise<HarnessRun> {
  const kind = o.kind ?? 'contacts';
  const opened = await openInput(file);
  const source = o.wrapSource ? o.wrapSource(opened) : opened;
  if (!sb && !o.api) throw new Error('runFile needs a sandbox or an api');
  const client = o.client ?? (o.api ? undefined : fastClient(sb as SandboxHandle));
  const outputPath =
    o.outputPath ?? join(o.runsDir, `out-${Math.random().toString(36).slice(2)}.csv`);
  try {
    const resolved = await resolveMapping(source, { kind });
    const summary = await runBulk({
      kind,
      source,
      mapping: resolved.mapping,
      mappingJson: resolved.names,
      validate: { header: source.header },
      metadata:
        kind === 'contacts'
          ? { business_email_exists: false, real_time_verification: false }
          : { top_matches_returned: 1 },
      batchSize: 100,
      concurrency: 4,
      dedupe: true,
      timeoutMs: 3_600_000,
      wait: true,
      restart: false,
      baseUrl: sb?.url ?? 'http://127.0.0.1:9',
      command: 'enrich contacts test.csv',
      api: o.api ?? toBulkApi(client as EnrichClient),
      env: {
        now: Date.now,
        sleep: async (ms) => o.onSleep?.(ms),
        random: () => 0.5,
      },
      ...o,
      output: {
        target: outputPath,
        format: 'csv',
        bom: false,
        formulaEscape: 'auto',
        explode: false,
        prefix: 'enriched_',
        ...o.output,
      },
    });
    const output = summary.written ? await readFile(outputPath, 'utf8') : '';
    return { summary, output, outputPath };
  } finally {
    await source.close();
    if (!o.client) await client?.close();
  }
}

/** Parses CSV text written by the tool into rows of cells. */
export function parseCsv(text: string): string[][] {
  return parse(text, { relax_column_count: true }) as string[][];
}
