// The results cache's figures of `npm run bench` at its largest size (issue 16), beyond the
// cold and warm runs of every throughput round:
//   limited  - a cold run and a warm one inside a memory limit (a cgroup of N MB: memory-limit.js);
//   profiled - a cold run under --cpu-prof: the share of the cache's lookups in its CPU;
//   service  - a cold run against a service whose jobs take time (--record-ms per record, as in
//              bench:service), then a warm one: how much sooner a user has the results.
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { countCsvRecords } from './count-rows.js';
import { measureNode } from './measure.js';
import { memoryLimit } from './memory-limit.js';
import { cacheTimes } from './profile-share.js';
import { clientEnv, startSandboxProcess } from './sandbox-process.js';

const round = (x) => Math.round(x * 100) / 100;

/** The figures of one measured run that the JSON keeps. */
function figures(r) {
  return {
    wall_ms: r.wall_ms,
    cpu_ms: r.cpu_ms,
    rss_mb: r.rss_mb,
    rss_anon_mb: r.rss_anon_mb,
    rss_file_mb: r.rss_file_mb,
  };
}

/** Runs `enrich contacts file`; fails unless it exits 0, writes every row and spends `credits` (when given). */
async function contacts(bin, file, rows, dir, name, env, sb, o = {}) {
  const out = join(dir, `${name}-out.csv`);
  const before = (await sb.stats()).credits_charged;
  const r = await measureNode(bin, ['contacts', file, '-o', out, '--quiet'], { env, ...o });
  if (r.code !== 0) throw new Error(`${name} run exited ${r.code}: ${r.stderr.slice(-2000)}`);
  const written = await countCsvRecords(out);
  if (written !== rows) throw new Error(`${name} run wrote ${written} rows of ${rows}`);
  rmSync(out, { force: true });
  const spent = (await sb.stats()).credits_charged - before;
  if (o.credits !== undefined && spent !== o.credits)
    throw new Error(`${name} run spent ${spent} credits, expected ${o.credits}`);
  return { ...figures(r), credits: spent };
}

/** A copy of `input` under a new name: another file, so another run (not a resume of the last). */
function copyAs(input, dir, name) {
  const file = join(dir, `${name}.csv`);
  copyFileSync(input, file);
  return file;
}

/** A cold and a warm run inside a memory limit of `limitMb`, each in a cgroup of its own. */
async function limitedRuns(bin, input, rows, work, limitMb, log) {
  const sb = await startSandboxProcess();
  const dir = mkdtempSync(join(work, 'limited-'));
  try {
    const env = clientEnv(sb, dir);
    const out = {};
    for (const name of ['cold', 'warm']) {
      const limit = memoryLimit(limitMb);
      if (limit.unavailable) return { limit_mb: limitMb, unavailable: limit.unavailable };
      try {
        const r = await contacts(bin, copyAs(input, dir, name), rows, dir, name, env, sb, {
          wrap: limit.wrap,
          ...(name === 'warm' ? { credits: 0 } : {}),
        });
        out[name] = { ...r, cgroup_peak_mb: limit.peakMb(), limit_hits: limit.failcnt() };
      } finally {
        limit.close();
      }
      log(
        `  ${name} inside ${limitMb} MB: wall ${out[name].wall_ms} ms, CPU ${out[name].cpu_ms} ms, peak RSS ${out[name].rss_mb} MB (anonymous ${out[name].rss_anon_mb} MB), the cgroup's peak ${out[name].cgroup_peak_mb} MB`,
      );
    }
    return { limit_mb: limitMb, ...out };
  } finally {
    await sb.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A cold run under --cpu-prof: its CPU, and the share of the cache's lookups and fill in it. */
async function profiledCold(bin, input, rows, work, log) {
  const sb = await startSandboxProcess();
  const dir = mkdtempSync(join(work, 'profiled-'));
  try {
    const profDir = join(dir, 'profile');
    const r = await contacts(bin, input, rows, dir, 'profiled', clientEnv(sb, dir), sb, {
      nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir],
    });
    const [name] = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'));
    const times = cacheTimes(join(profDir, name));
    const p = {
      ...r,
      ...times,
      lookups_share_of_cpu: round(times.lookups_ms / r.cpu_ms),
      fill_share_of_cpu: round(times.fill_ms / r.cpu_ms),
    };
    log(
      `  profiled cold run: the lookups take ${Math.round(p.lookups_share_of_cpu * 100)}% of its CPU (${p.lookups_ms} of ${p.cpu_ms} ms), filling the cache ${Math.round(p.fill_share_of_cpu * 100)}% (main thread)`,
    );
    return p;
  } finally {
    await sb.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Cold against a service whose job of n records takes n x recordMs, then warm from its cache. */
async function serviceRuns(bin, input, rows, work, recordMs, log) {
  const sb = await startSandboxProcess(['--record-ms', String(recordMs)]);
  const dir = mkdtempSync(join(work, 'service-'));
  try {
    const env = clientEnv(sb, dir);
    const cold = await contacts(bin, copyAs(input, dir, 'cold'), rows, dir, 'cold', env, sb);
    const warm = await contacts(bin, copyAs(input, dir, 'warm'), rows, dir, 'warm', env, sb, {
      credits: 0,
    });
    const r = {
      record_ms: recordMs,
      cold,
      warm,
      cold_over_warm_wall: round(cold.wall_ms / warm.wall_ms),
    };
    log(
      `  against jobs of ${recordMs} ms a record (${recordMs} s per 1,000): cold ${cold.wall_ms} ms, warm ${warm.wall_ms} ms: warm is ${r.cold_over_warm_wall}x faster`,
    );
    return r;
  } finally {
    await sb.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The cache section of `npm run bench` at `rows` rows; each part skipped when its option is 0. */
export async function cacheRounds({ bin, input, rows, work, limitMb, recordMs, log }) {
  log(
    `results cache at ${rows} rows (a memory limit, a profiled cold run, a service whose jobs take time)...`,
  );
  return {
    rows,
    limited: limitMb > 0 ? await limitedRuns(bin, input, rows, work, limitMb, log) : undefined,
    profiled_cold: await profiledCold(bin, input, rows, work, log),
    service: recordMs > 0 ? await serviceRuns(bin, input, rows, work, recordMs, log) : undefined,
  };
}
