import { COMPANY_RECORD_FIELDS } from '../contract/limits.js';

/**
 * The shapes of the answers the cache keeps, as field names in order: written once into a new
 * cache file as lmdb's table of shared structures, and never changed after (nothing adds to
 * it: `shouldShareStructure` says no to every other shape). An answer of one of these shapes
 * is stored without its field names, about 40% smaller and twice as fast to read back; any
 * other shape (a service that orders its fields otherwise, a field more or less) defines its
 * own structure inside the answer. Every process reads the table from the file, never from
 * here: changing this list changes only the files created after.
 *
 * The order is the one of api-spec.md section 2 (the sandbox's too), without the echoes the
 * cache drops (`original_fields`, `custom_fields`).
 */
export const RECORD_SHAPES: readonly (readonly string[])[] = [
  // An answer as stored (results-cache.ts `Stored`).
  ['r', 't', 'c'],
  // 2.2 Contact record, its location, its company summary.
  [
    'error',
    'credit_charged',
    'first_name',
    'last_name',
    'email',
    'office_phone',
    'mobile_phone',
    'location',
    'title',
    'job_level',
    'department',
    'prof_network',
    'company',
  ],
  ['country', 'state', 'zip_code'],
  ['name', 'description', 'website', 'employees_category', 'revenue_category', 'location'],
  // 2.1 Company record.
  ['error', 'credit_charged', ...COMPANY_RECORD_FIELDS],
];
