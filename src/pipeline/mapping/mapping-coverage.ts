import { companyCombinationError, contactCombinationError } from '../../contract/rules.js';
import type { ColumnMapping, BulkKind } from './mapping-types.js';

/**
 * Why no row could ever be valid with this mapping (the API's combinations), or undefined when
 * some could; each field named by `name` (the caller's words).
 */
export function mappingCoverageError(
  kind: BulkKind,
  mapping: ColumnMapping,
  name: (field: string) => string = (field) => field,
): string | undefined {
  const present: Record<string, string> = {};
  for (const f of Object.keys(mapping.fields)) present[f] = 'x';
  if (mapping.split) present.first_name = present.last_name = 'x';
  const rule =
    kind === 'contacts'
      ? contactCombinationError(present, name)
      : companyCombinationError(present, name);
  if (!rule) return undefined;
  const mapped = Object.keys(present).map(name);
  return `no row can be sent with this mapping (${mapped.length ? `mapped: ${mapped.join(', ')}` : 'no column was recognised'}): every row ${rule}`;
}
