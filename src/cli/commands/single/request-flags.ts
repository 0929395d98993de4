import type { z } from 'zod';
import { charLength } from '../../../contract/limits.js';
import { usageError } from '../../../errors.js';

/** Maps wire field names to the flags (or argument) that set them. */
export type FlagNames = Readonly<Record<string, string>>;

/** Rewrites wire field names in a rule message into flag names. */
function toFlags(text: string, flags: FlagNames): string {
  const names = Object.keys(flags).sort((a, b) => b.length - a.length);
  return names.reduce(
    (out, name) => out.replace(new RegExp(`\\b${name}\\b`, 'g'), flags[name] ?? name),
    text,
  );
}

/** Says what a zod issue expected and what it got, in words. */
function describeIssue(issue: z.core.$ZodIssue, got: unknown): string {
  const shown =
    typeof got === 'string' ? `"${got.length > 40 ? `${got.slice(0, 40)}…` : got}"` : String(got);
  if (issue.code === 'too_big' && typeof got === 'string') {
    return `expected at most ${String(issue.maximum)} characters, got ${charLength(got)}`;
  }
  if (issue.code === 'too_small' && typeof got === 'string') {
    return `expected at least ${String(issue.minimum)} character(s), got ${got.length}`;
  }
  if (issue.code === 'invalid_format')
    return `expected a valid ${issue.format === 'email' ? 'email address' : issue.format}, got ${shown}`;
  return issue.message;
}

/** The value at `path` inside `body`. */
function valueAt(body: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown> | undefined)?.[k], body);
}

/**
 * Checks a request body against its contract schema before anything is sent; on failure
 * throws a usage error naming the flag and the rule that failed.
 */
export function checkRequest<S extends z.ZodType>(
  command: string,
  schema: S,
  body: unknown,
  flags: FlagNames,
): z.output<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw usageError(`${command}: invalid request`);
  const field = [...issue.path].reverse().find((p) => typeof p === 'string');
  const hint = /mobile_phone_enrichment/.test(issue.message)
    ? 'add --mobile'
    : `see \`enrich ${command} --help\``;
  if (field === undefined) {
    throw usageError(`${command}: ${toFlags(issue.message, flags)}`, { hint });
  }
  const flag = flags[field] ?? field;
  const rule = describeIssue(issue, valueAt(body, issue.path));
  throw usageError(`${command}: ${flag}: ${rule} (${field})`, { hint });
}

/** Drops null, undefined and empty-string fields (recursively) for the human view. */
export function compact(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null || v === undefined || v === '') continue;
    if (typeof v === 'object' && !Array.isArray(v)) {
      const inner = compact(v as Record<string, unknown>);
      if (Object.keys(inner).length) out[k] = inner;
    } else out[k] = v;
  }
  return out;
}
