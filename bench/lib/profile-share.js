// Reads a V8 .cpuprofile (node --cpu-prof) and sums the time spent inside chosen functions
// (inclusive: a sample counts when any of its callers matches; once per sample).
import { readFileSync } from 'node:fs';

/**
 * `pick(callFrame)` names the bucket a frame belongs to, or undefined; resolves
 * {bucket: ms} plus `total_ms` (every sample) and `idle_ms`.
 */
export function inclusiveTimes(profileFile, pick) {
  const p = JSON.parse(readFileSync(profileFile, 'utf8'));
  const parent = new Map();
  const byId = new Map();
  for (const n of p.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const out = { total_ms: 0, idle_ms: 0 };
  for (let i = 0; i < p.samples.length; i++) {
    const ms = (p.timeDeltas[i] ?? 0) / 1000;
    out.total_ms += ms;
    const leaf = byId.get(p.samples[i]);
    if (leaf?.callFrame.functionName === '(idle)') out.idle_ms += ms;
    const seen = new Set();
    for (let id = p.samples[i]; id !== undefined; id = parent.get(id)) {
      const bucket = pick(byId.get(id).callFrame);
      if (bucket === undefined || seen.has(bucket)) continue;
      seen.add(bucket);
      out[bucket] = (out[bucket] ?? 0) + ms;
    }
  }
  for (const k of Object.keys(out)) out[k] = Math.round(out[k]);
  return out;
}

/**
 * The results cache's part of a run's profile: ms inside its lookups (`get` of
 * dist/cache/results-cache.js) and inside filling it (`fillCache`), main thread only.
 */
export function cacheTimes(profileFile) {
  const times = inclusiveTimes(profileFile, (f) => {
    if (f.url.endsWith('/dist/cache/results-cache.js') && f.functionName === 'get')
      return 'lookups_ms';
    if (f.url.endsWith('/dist/pipeline/run/cache-use.js') && f.functionName === 'fillCache')
      return 'fill_ms';
    return undefined;
  });
  return { lookups_ms: times.lookups_ms ?? 0, fill_ms: times.fill_ms ?? 0 };
}
