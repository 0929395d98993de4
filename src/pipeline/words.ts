import type { RunWords } from './types.js';

/**
 * The library's words: how a message names `enrichFile`'s options. The CLI passes its own
 * (`CLI_WORDS`), which name flags and commands; every stage that tells the caller how to act
 * takes one of them, so a library caller is never told about a flag.
 */
export const LIBRARY_WORDS: RunWords = {
  resume: 'run it again with the same options',
  restart: 'run it again with restart: true',
  option: (name) => name,
  map: (field, column) => `map: { ${field}: ${JSON.stringify(column)} }`,
  kind: (kind) => `kind: '${kind}'`,
  fieldName: (field) => field,
  mappingFile: true,
};
