import { usageError } from '../errors.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

const DURATION = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i;

/** `what: ` before a message, or nothing for a caller that names the option itself. */
const named = (what: string | undefined) => (what === undefined ? '' : `${what}: `);

/** Two or more parts, each with its unit: `1h 30m`, `2h 00m`, `4m 05s`, as formatDuration writes them. */
const COMPOUND = /^\s*(?:\d+(?:\.\d+)?\s*(?:ms|s|m|h|d)\s*){2,}$/i;
const PART = /(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)/gi;

/**
 * The number and unit of a duration's text (USAGE when it is none). A compound duration, what
 * `enrich config get timeout` prints (`1h 30m`), is read too, as its milliseconds: a value the
 * tool shows can be given back to it (`ENRICH_TIMEOUT=$(enrich config get timeout)`).
 */
function durationParts(text: string, what?: string): { n: string; unit: string | undefined } {
  if (COMPOUND.test(text)) {
    let ms = 0;
    for (const [, n, unit] of text.matchAll(PART))
      ms += Number(n) * (UNITS[unit!.toLowerCase()] ?? 1);
    return { n: String(Math.round(ms)), unit: 'ms' };
  }
  const m = DURATION.exec(text);
  if (!m) {
    throw usageError(
      `${named(what)}expected a duration such as 500ms, 30s, 5m, 2h or 7d, got "${text}"`,
    );
  }
  return { n: m[1]!, unit: m[2]?.toLowerCase() };
}

const toMs = ({ n, unit }: { n: string; unit: string | undefined }) =>
  Math.round(Number(n) * (UNITS[unit ?? 'ms'] ?? 1));

/**
 * Parses a duration such as `500ms`, `30s`, `5m`, `2h`, `1d` (or a bare number of
 * milliseconds) into milliseconds. `what` names the option in the error message; without it the
 * message names nothing, for a caller that says itself which flag, variable or setting it read.
 */
export function parseDuration(text: string, what?: string): number {
  return toMs(durationParts(text, what));
}

/**
 * parseDuration for what a person types (a flag, an environment variable, `enrich config set`):
 * a number needs its unit. A bare `30` would be 30 ms, which no one means: `--max-age 30` would
 * look every row up again (and pay for it), `cache prune --older-than 30` erase every answer,
 * `--timeout 90` give up at once. `0` needs no unit.
 */
export function parseTypedDuration(text: string, what?: string): number {
  const parts = durationParts(text, what);
  const { n } = parts;
  if (parts.unit === undefined && Number(n) !== 0) {
    throw usageError(
      `${named(what)}expected a duration with its unit, such as ${n}d, ${n}h, ${n}m or ${n}s, got "${text}"`,
      { hint: `A number alone would be milliseconds; write ${n}ms if that is what you mean.` },
    );
  }
  return toMs(parts);
}

/** Formats milliseconds for people: `850ms`, `12.3s`, `4m 05s`, `2h 03m`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
