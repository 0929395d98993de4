import type { z } from 'zod';
import type { FieldError } from '../errors.js';

/** Formats a zod path like the service does: `contacts[3].first_name`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

/** Turns zod issues into field errors naming every offending field (unknown keys one by one). */
export function issuesToFieldErrors(issues: readonly z.core.$ZodIssue[]): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        out.push({ path: formatPath([...issue.path, key]), message: 'unknown field' });
      }
      continue;
    }
    out.push({ path: formatPath(issue.path) || '(body)', message: issue.message });
  }
  return out;
}

/** A one-line summary of field errors for the `message` of a 400. */
export function summarise(errors: readonly FieldError[]): string {
  const first = errors.slice(0, 3).map((e) => `${e.path}: ${e.message}`);
  const more = errors.length > 3 ? ` (and ${errors.length - 3} more)` : '';
  return `Invalid request body: ${first.join('; ')}${more}`;
}
