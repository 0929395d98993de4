import { expect } from 'vitest';
import { EnrichError } from '../../src/errors.js';
import {
  detectMapping,
  mappingToJson,
  type BulkKind,
} from '../../src/pipeline/mapping/map-columns.js';

/** Detects a mapping and returns it as field -> column name. */
export function mapped(
  kind: BulkKind,
  header: string[],
  samples: string[][] = [],
  overrides?: Record<string, string>,
) {
  return mappingToJson(detectMapping(kind, header, samples, overrides), header);
}

/** The EnrichError `fn` throws (it must throw one). */
export function failure(fn: () => unknown): EnrichError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(EnrichError);
    return err as EnrichError;
  }
  throw new Error('expected an error');
}
