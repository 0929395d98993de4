import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { afterEach, type TestContext } from 'vitest';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { toBulkApi } from '../../src/api/bulk-api.js';
import { createClient, type ClientOptions, type EnrichClient } from '../../src/api/client.js';
import { openInput, type InputSource } from '../../src/io/read.js';
import type { BulkRunOptions } from '../../src/bulk/options.js';
import { CLI_WORDS } from '../../src/cli/commands/bulk/resolve.js';
import { resolveRun } from '../../src/bulk/resolve-run.js';
import type { PollEnv } from '../../src/pipeline/run/poll.js';
import { runBulk, type RunDeps, type RunSummary } from '../../src/pipeline/run/run.js';
import type { BulkApi, JoinOutput } from '../../src/pipeline/types.js';
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

/** What a test closes things with when it ends (vitest's test context). */
export type TestEnd = Pick<TestContext, 'onTestFinished'>;

/**
 * A sandbox for one test, closed when it ends: for tests that run side by side
 * (`it.concurrent.for(SANDBOX_MODES)`), which `sandboxPerTest`'s one sandbox cannot serve.
 */
export async function sandboxForTest(t: TestEnd, o: SandboxOptions = {}) {
  const sb = await startSandbox({ port: 0, ...o });
  t.onTestFinished(() => sb.close());
  return sb;
}

/** A client for one test, closed when it ends. */
export function clientForTest(t: TestEnd, o: ClientOptions): EnrichClient {
  const c = createClient(o);
  t.onTestFinished(() => c.close());
  return c;
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

/** What a test may set of a run: the library's options, plus the harness's own. */
export type RunFileOptions = Partial<Omit<BulkRunOptions, 'output' | 'idColumn'>> & {
  runsDir: string;
  outputPath?: string;
  /** The output's format and writing options (`target` is `outputPath`). */
  output?: Partial<Omit<JoinOutput, 'target'>>;
  /** The id column, by name or position. */
  idColumn?: string | number;
  /** Companies: `{ top_matches_returned: n }` (as the request metadata says it). */
  metadata?: { top_matches_returned?: number };
  client?: EnrichClient;
  api?: BulkApi;
  env?: PollEnv;
  join?: RunDeps['join'];
  /** The service's base URL as the run is told it (the sandbox's by default). */
  baseUrl?: string;
  onWarning?: RunDeps['onWarning'];
  onProgress?: RunDeps['onProgress'];
  onServiceBound?: RunDeps['onServiceBound'];
  /** Told each job's events (submitted, retried, done…), as the progress display is. */
  onJob?: RunDeps['onJob'];
  onSleep?: (ms: number) => void;
  /** Stands in for the opened input (to watch what the run asks of it). */
  wrapSource?: (source: InputSource) => InputSource;
};

/**
 * Runs a bulk enrichment of `file` against the sandbox, with instant polling; or, with
 * `api` and no sandbox, against that fake service. The run is resolved as every caller's
 * is (`resolveRun`), with test defaults: batches of 100, 4 in flight, an hour to wait.
 */
export async function runFile(
  sb: SandboxHandle | undefined,
  file: string,
  o: RunFileOptions,
): Promise<HarnessRun> {
  const {
    client: given,
    api,
    env,
    join: joinTuning,
    onSleep,
    wrapSource,
    output = {},
    metadata,
    baseUrl,
    onWarning,
    onProgress,
    onServiceBound,
    onJob,
    ...rest
  } = o;
  const opened = await openInput(file);
  const source = wrapSource ? wrapSource(opened) : opened;
  if (!sb && !api) throw new Error('runFile needs a sandbox or an api');
  const client = given ?? (api ? undefined : fastClient(sb as SandboxHandle));
  const outputPath =
    o.outputPath ?? join(dirname(file), `out-${Math.random().toString(36).slice(2)}.csv`);
  try {
    const { outputPath: _, ...options } = rest;
    const idColumn =
      typeof o.idColumn === 'number' ? (source.header[o.idColumn] as string) : o.idColumn;
    const run = await resolveRun(
      {
        kind: 'contacts',
        batchSize: 100,
        concurrency: 4,
        timeoutMs: 3_600_000,
        command: 'enrich contacts test.csv',
        format: 'csv',
        words: CLI_WORDS,
        ...options,
        idColumn,
        request: { top: metadata?.top_matches_returned, ...options.request },
        output: outputPath,
        ...output,
      },
      source,
    );
    const summary = await runBulk(run, {
      api: api ?? toBulkApi(client as EnrichClient),
      baseUrl: baseUrl ?? sb?.url ?? 'http://127.0.0.1:9',
      onWarning,
      onProgress,
      env: env ?? { now: Date.now, sleep: async (ms) => onSleep?.(ms), random: () => 0.5 },
      ...(joinTuning ? { join: joinTuning } : {}),
      ...(onServiceBound ? { onServiceBound } : {}),
      ...(onJob ? { onJob } : {}),
    });
    const text = summary.written ? await readFile(outputPath, 'utf8') : '';
    return { summary, output: text, outputPath };
  } finally {
    await source.close();
    if (!given) await client?.close();
  }
}

/** Parses CSV text written by the tool into rows of cells. */
export function parseCsv(text: string): string[][] {
  return parse(text, { relax_column_count: true }) as string[][];
}

/**
 * The sandbox's two modes, for `it.each(SANDBOX_MODES)`: a money test that needs only
 * api-spec.md's promises runs against both (pass `{ specOnly }` to the sandbox).
 */
export const SANDBOX_MODES = [
  { name: 'default', specOnly: false },
  { name: 'spec-only', specOnly: true },
] as const;
