import { usageError } from '../errors.js';
import type { FaultStep, Faults } from './types.js';

const FAULT_KEYS = new Set([
  'rates',
  'reset_rate',
  'reset_after_rate',
  'truncate_rate',
  'latency_ms',
  'retry_after',
  'retry_after_s',
  'shuffle_results',
  'drop_custom_fields',
  'drop_records',
  'paths',
  'next',
]);
const STEP_KEYS = new Set([
  'status',
  'reset',
  'after',
  'truncate',
  'delay_ms',
  'retry_after',
  'retry_after_s',
  'path',
]);

const isRate = (v: unknown): v is number => typeof v === 'number' && v >= 0 && v <= 1;
const isMs = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isStatus = (v: unknown): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= 400 && v <= 599;

/** Checks a faults object (PUT /_sandbox/faults, --faults JSON); returns the problems found. */
export function faultProblems(f: unknown): string[] {
  if (f === null || typeof f !== 'object' || Array.isArray(f))
    return ['faults: expected a JSON object'];
  const o = f as Record<string, unknown>;
  const p: string[] = [];
  for (const k of Object.keys(o)) if (!FAULT_KEYS.has(k)) p.push(`${k}: unknown fault`);
  if (o.rates !== undefined) {
    if (o.rates === null || typeof o.rates !== 'object')
      p.push('rates: expected an object of status -> rate');
    else
      for (const [s, r] of Object.entries(o.rates)) {
        if (!isStatus(Number(s))) p.push(`rates.${s}: expected an HTTP error status 400-599`);
        if (!isRate(r)) p.push(`rates.${s}: expected a rate between 0 and 1`);
      }
  }
  for (const k of ['reset_rate', 'reset_after_rate', 'truncate_rate', 'drop_records'])
    if (o[k] !== undefined && !isRate(o[k])) p.push(`${k}: expected a rate between 0 and 1`);
  const lat = o.latency_ms;
  if (
    lat !== undefined &&
    !isMs(lat) &&
    !(Array.isArray(lat) && lat.length === 2 && isMs(lat[0]) && isMs(lat[1]) && lat[0] <= lat[1])
  )
    p.push('latency_ms: expected milliseconds or [min, max]');
  if (o.retry_after !== undefined && o.retry_after !== 'seconds' && o.retry_after !== 'http-date')
    p.push('retry_after: expected "seconds" or "http-date"');
  if (o.retry_after_s !== undefined && !isMs(o.retry_after_s))
    p.push('retry_after_s: expected seconds >= 0');
  if (o.shuffle_results !== undefined && typeof o.shuffle_results !== 'boolean')
    p.push('shuffle_results: expected a boolean');
  const d = o.drop_custom_fields;
  if (d !== undefined && typeof d !== 'boolean' && !isRate(d))
    p.push('drop_custom_fields: expected a boolean or a rate');
  if (
    o.paths !== undefined &&
    !(Array.isArray(o.paths) && o.paths.every((x) => typeof x === 'string'))
  )
    p.push('paths: expected an array of path prefixes');
  if (o.next !== undefined) {
    if (!Array.isArray(o.next)) p.push('next: expected an array of steps');
    else o.next.forEach((s: unknown, i) => p.push(...stepProblems(s, `next[${i}]`)));
  }
  return p;
}

function stepProblems(s: unknown, where: string): string[] {
  if (s === null || typeof s !== 'object' || Array.isArray(s))
    return [`${where}: expected an object`];
  const o = s as Record<string, unknown>;
  const p: string[] = [];
  for (const k of Object.keys(o)) if (!STEP_KEYS.has(k)) p.push(`${where}.${k}: unknown field`);
  if (o.status !== undefined && !isStatus(o.status))
    p.push(`${where}.status: expected an HTTP error status 400-599`);
  if (o.delay_ms !== undefined && !isMs(o.delay_ms))
    p.push(`${where}.delay_ms: expected milliseconds`);
  if (o.path !== undefined && typeof o.path !== 'string')
    p.push(`${where}.path: expected a path prefix`);
  if (o.retry_after !== undefined && o.retry_after !== 'seconds' && o.retry_after !== 'http-date')
    p.push(`${where}.retry_after: expected "seconds" or "http-date"`);
  return p;
}

/** Parses `--faults`: a JSON object, or the compact form `500=0.05,429=0.05,reset=0.02,latency=0-50,shuffle`. */
export function parseFaultSpec(text: string): Faults {
  const t = text.trim();
  let faults: Faults;
  if (t.startsWith('{')) {
    try {
      faults = JSON.parse(t) as Faults;
    } catch (err) {
      throw usageError(
        `--faults: expected a JSON object, got invalid JSON (${(err as Error).message})`,
      );
    }
  } else faults = parseCompact(t);
  const problems = faultProblems(faults);
  if (problems.length) throw usageError(`--faults: ${problems.join('; ')}`);
  return faults;
}

function parseCompact(t: string): Faults {
  const f: Faults = {};
  for (const part of t
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    const value = eq < 0 ? undefined : part.slice(eq + 1).trim();
    const num = (): number => {
      const n = Number(value);
      if (value === undefined || value === '' || !Number.isFinite(n))
        throw usageError(`--faults: "${part}": expected ${name}=<number>`);
      return n;
    };
    if (/^\d{3}$/.test(name)) (f.rates ??= {})[name] = num();
    else if (name === 'reset') f.reset_rate = num();
    else if (name === 'reset-after') f.reset_after_rate = num();
    else if (name === 'truncate') f.truncate_rate = num();
    else if (name === 'latency') {
      const m = /^(\d+)(?:-(\d+))?$/.exec(value ?? '');
      if (!m) throw usageError(`--faults: "${part}": expected latency=<ms> or latency=<min>-<max>`);
      f.latency_ms = m[2] === undefined ? Number(m[1]) : [Number(m[1]), Number(m[2])];
    } else if (name === 'shuffle') f.shuffle_results = true;
    else if (name === 'drop-custom-fields')
      f.drop_custom_fields = value === undefined ? true : num();
    else if (name === 'drop-records') f.drop_records = num();
    else if (name === 'retry-after') f.retry_after = value as Faults['retry_after'];
    else if (name === 'retry-after-s') f.retry_after_s = num();
    else if (name === 'paths') f.paths = (value ?? '').split('|').filter(Boolean);
    else
      throw usageError(
        `--faults: unknown fault "${name}"; expected <status>=rate, reset, reset-after, truncate, latency, shuffle, drop-custom-fields, drop-records, retry-after, retry-after-s or paths`,
      );
  }
  return f;
}

/** What the faults decided for one request. */
export interface FaultDecision {
  delayMs: number;
  status?: number;
  reset?: boolean;
  resetAfter?: boolean;
  truncate?: boolean;
  retryAfter: 'seconds' | 'http-date';
  retryAfterS: number;
}

/**
 * Decides the faults of one service request: the first matching `next` step is consumed
 * (mutating `faults.next`), else the random rates apply when the path is in `paths`.
 */
export function decideFaults(faults: Faults, path: string, random: () => number): FaultDecision {
  const base: FaultDecision = {
    delayMs: latency(faults.latency_ms, random),
    retryAfter: faults.retry_after ?? 'seconds',
    retryAfterS: faults.retry_after_s ?? 1,
  };
  const queue = faults.next;
  const i = queue ? queue.findIndex((s) => s.path === undefined || path.startsWith(s.path)) : -1;
  if (queue && i >= 0) {
    const step = queue.splice(i, 1)[0] as FaultStep;
    return {
      delayMs: step.delay_ms ?? base.delayMs,
      status: step.status,
      reset: step.reset === true && step.after !== true,
      resetAfter: step.reset === true && step.after === true,
      truncate: step.truncate === true,
      retryAfter: step.retry_after ?? base.retryAfter,
      retryAfterS: step.retry_after_s ?? base.retryAfterS,
    };
  }
  if (faults.paths && !faults.paths.some((p) => path.startsWith(p))) return base;
  if (faults.reset_rate && random() < faults.reset_rate) return { ...base, reset: true };
  for (const [status, rate] of Object.entries(faults.rates ?? {})) {
    if (rate > 0 && random() < rate) return { ...base, status: Number(status) };
  }
  if (faults.reset_after_rate && random() < faults.reset_after_rate)
    return { ...base, resetAfter: true };
  if (faults.truncate_rate && random() < faults.truncate_rate) return { ...base, truncate: true };
  return base;
}

function latency(l: Faults['latency_ms'], random: () => number): number {
  if (l === undefined) return 0;
  if (typeof l === 'number') return l;
  return Math.round(l[0] + random() * (l[1] - l[0]));
}

/** The Retry-After value: seconds, or an HTTP date that many seconds after `now`. */
export function retryAfterValue(
  form: 'seconds' | 'http-date',
  seconds: number,
  now: number,
): string {
  return form === 'http-date'
    ? new Date(now + seconds * 1000).toUTCString()
    : String(Math.max(0, Math.round(seconds)));
}
