// `npm run mutate [-- <target>...] [--concurrency N] [--force] [--typecheck] [--report]`: mutation testing (StrykerJS)
// of the money- and integrity-critical modules (issue 21). One Stryker run per target file,
// with only the in-process tests that exercise it (tests that drive dist/ through the CLI
// cannot see a mutant), incremental (reports/stryker-incremental-<target>.json: an unchanged
// file and its unchanged tests are not run again). Reports: reports/mutation/<target>.html
// and .json; the per-file scores: reports/mutation/summary.md (for RELIABILITY.md).
// Not part of `npm test`. Exit 1 when a target scores under THRESHOLD or any mutant has no
// coverage.
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, URL } from 'node:url';
import { TARGETS, THRESHOLD } from './mutate-targets.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'reports/mutation');
const log = (s) => process.stderr.write(`${s}\n`);

const args = process.argv.slice(2);
const flag = (name) => {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  const value = args[at + 1];
  args.splice(at, 2);
  return value;
};
const concurrency = Number(flag('--concurrency') ?? 2);
const force = args.includes('--force');
// The TypeScript checker drops mutants that do not compile before any test runs. It is off by
// default: on this 2-core machine it type-checked about one mutant a second and left the test
// runner idle (journal.ts: 14 minutes and not done), while running a mutant's tests takes well
// under a second. Without it, a mutant that would not compile runs as JavaScript like any other.
const typecheck = args.includes('--typecheck');
const names = args.filter((a) => !a.startsWith('--'));
const unknown = names.filter((n) => !TARGETS.some((t) => t.name === n));
if (unknown.length > 0 || !Number.isSafeInteger(concurrency) || concurrency < 1) {
  log(`mutate: unknown target ${unknown.join(', ') || '(bad --concurrency)'}`);
  log(`targets: ${TARGETS.map((t) => t.name).join(' ')}`);
  process.exit(2);
}
const chosen = names.length > 0 ? TARGETS.filter((t) => names.includes(t.name)) : TARGETS;
mkdirSync(OUT, { recursive: true });

/** The Stryker options of one target. */
function configOf(target) {
  return {
    $schema: '../../node_modules/@stryker-mutator/core/schema/stryker-schema.json',
    packageManager: 'npm',
    testRunner: 'vitest',
    vitest: { configFile: 'vitest.config.ts', related: false },
    ...(typecheck
      ? {
          checkers: ['typescript'],
          // src only: type-checking the tests too is slower still.
          tsconfigFile: 'tsconfig.build.json',
          typescriptChecker: { prioritizePerformanceOverAccuracy: true },
        }
      : {}),
    // 'all' runs every test of the target's files on each mutant (stopping at the first
    // failure). 'perTest' is faster but, with vitest 4, missed tests that do kill a mutant
    // (join.ts:43, poll.ts:30 survived it and die to a test run by hand); only targets whose
    // tests are too slow for 'all' (bulk runs) use it, and their scores are then a lower bound.
    coverageAnalysis: target.coverage ?? 'all',
    mutate: [target.file],
    testFiles: target.tests,
    concurrency,
    incremental: true,
    // perTest only: module-level constants are evaluated once per test worker, not per
    // mutant, so such a mutant is left out rather than reported as a survivor.
    ...(target.coverage === 'perTest' ? { ignoreStatic: true } : {}),
    incrementalFile: `reports/stryker-incremental-${target.name}.json`,
    force,
    reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
    clearTextReporter: { allowColor: false, logTests: false },
    htmlReporter: { fileName: `reports/mutation/${target.name}.html` },
    jsonReporter: { fileName: `reports/mutation/${target.name}.json` },
    ignorePatterns: ['dist', 'bench/out', 'coverage', 'reports', '.enrich-tmp'],
    tempDirName: `.stryker-tmp/${target.name}`,
    cleanTempDir: 'always',
    timeoutMS: 10_000,
    thresholds: { high: 90, low: THRESHOLD, break: null },
  };
}

/**
 * Every mutant Stryker reports Survived, run again by hand, so a survivor in the table is one
 * the tests really let through. Stryker 9.6's vitest runner reports some killed mutants as
 * survivors: static ones (module-level constants, evaluated when a module is imported), which
 * with `testFiles` it activates only after the import and never reloads (stryker-js#6144,
 * #6209; session 19: all 26 of validate.ts's were killed by hand), and some others whose run
 * completed no test (join.ts:43 in session 14; stryker-js#6213). Each is applied to the file in
 * a copy of the repository and the target's tests run there; a failing run kills it. The JSON
 * report is updated, so `--report` shows the same. Returns how many were run.
 */
function rerunSurvivors(target) {
  const path = join(OUT, `${target.name}.json`);
  const report = JSON.parse(readFileSync(path, 'utf8'));
  const file = report.files[target.file];
  const survivors = file.mutants.filter((m) => m.status === 'Survived');
  if (survivors.length === 0) return 0;
  const copy = mkdtempSync(join(tmpdir(), 'enrich-mutate-'));
  try {
    const skip = new Set(['node_modules', '.git', 'reports', '.stryker-tmp', 'dist', 'coverage']);
    cpSync(ROOT, copy, {
      recursive: true,
      filter: (src) => !skip.has(relative(ROOT, src).split(/[\\/]/)[0]),
    });
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
    const source = file.source;
    const starts = [0];
    for (let i = 0; i < source.length; i++) if (source[i] === '\n') starts.push(i + 1);
    const at = (p) => starts[p.line - 1] + p.column - 1;
    for (const m of survivors) {
      const mutated =
        source.slice(0, at(m.location.start)) + m.replacement + source.slice(at(m.location.end));
      writeFileSync(join(copy, target.file), mutated);
      const run = spawnSync('npx', ['vitest', 'run', '--bail', '1', ...target.tests], {
        cwd: copy,
        stdio: 'ignore',
      });
      const what = m.static ? 'static mutant' : 'mutant';
      if (run.status !== 0) {
        m.status = 'Killed';
        m.statusReason = `${what}: Stryker saw it survive; killed when run by hand (scripts/mutate.js)`;
      } else m.statusReason = `${what}: survived when run by hand too (scripts/mutate.js)`;
    }
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
  writeFileSync(path, JSON.stringify(report));
  return survivors.length;
}

/** Score, survivors and uncovered mutants of one file from Stryker's JSON report. */
function scoreOf(target) {
  const report = JSON.parse(readFileSync(join(OUT, `${target.name}.json`), 'utf8'));
  const file = report.files[target.file];
  const count = (s) => file.mutants.filter((m) => m.status === s).length;
  const killed = count('Killed') + count('Timeout');
  const survived = count('Survived');
  const noCoverage = count('NoCoverage');
  const valid = killed + survived + noCoverage;
  const score = valid === 0 ? 100 : (100 * killed) / valid;
  const ignored = count('Ignored');
  const left = file.mutants
    .filter((m) => m.status === 'Survived' || m.status === 'NoCoverage')
    .map(
      (m) =>
        `  ${m.status} ${target.file}:${m.location.start.line} ${m.mutatorName}: ${m.replacement}`,
    );
  return { ...target, killed, survived, noCoverage, ignored, score, left };
}

const results = [];
// --report: no run, the table of the last JSON reports (e.g. after runs made in parts).
const reportOnly = args.includes('--report');
for (const target of reportOnly ? [] : chosen) {
  const config = join(OUT, `${target.name}.config.json`);
  writeFileSync(config, JSON.stringify(configOf(target), null, 2));
  const started = Date.now();
  log(`mutate: ${target.file} with ${target.tests.length} test files...`);
  const logFd = openSync(join(OUT, `${target.name}.log`), 'w');
  const run = spawnSync('npx', ['stryker', 'run', config], {
    cwd: ROOT,
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  if (run.status !== 0 || !existsSync(join(OUT, `${target.name}.json`))) {
    const minutes = ((Date.now() - started) / 60_000).toFixed(1);
    log(
      `mutate: ${target.name} failed (exit ${run.status}); see reports/mutation/${target.name}.log`,
    );
    results.push({ ...target, failed: true, minutes });
    continue;
  }
  const again = rerunSurvivors(target);
  if (again > 0) log(`mutate: ${target.name}: ${again} survivors run again by hand`);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  const r = { ...scoreOf(target), minutes };
  log(
    `mutate: ${target.file}: ${r.score.toFixed(1)}%, ${r.survived} survived, ${r.noCoverage} no coverage (${minutes} min)`,
  );
  for (const line of r.left) log(line.replace(/\s+/g, ' '));
  results.push(r);
}

if (reportOnly) {
  for (const target of chosen) {
    if (existsSync(join(OUT, `${target.name}.json`)))
      results.push({ ...scoreOf(target), minutes: '' });
  }
}
const rows = results.map((r) =>
  r.failed
    ? `| \`${r.file}\` | failed | | | | ${r.minutes} |`
    : `| \`${r.file}\` | ${r.score.toFixed(1)}% | ${r.killed} | ${r.survived} | ${r.noCoverage} | ${r.ignored} | ${r.minutes} |`,
);
const table = [
  `Measured ${new Date().toISOString().slice(0, 10)} (concurrency ${concurrency}):`,
  '',
  '| file | mutation score | killed | survived | no coverage | disabled (equivalent) | minutes |',
  '|---|---|---|---|---|---|---|',
  ...rows,
].join('\n');
writeFileSync(join(OUT, 'summary.md'), `${table}\n`);
process.stdout.write(`${table}\n`);
const short = results.filter((r) => r.failed || r.score < THRESHOLD || r.noCoverage > 0);
if (short.length > 0) {
  log(
    `mutate: under ${THRESHOLD}% or with uncovered mutants: ${short.map((r) => r.name).join(', ')}`,
  );
  process.exit(1);
}
