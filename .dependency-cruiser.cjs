/**
 * DESIGN.md section 2 as rules: each folder of src/ imports only what its row of the table
 * allows, data flows one way inside pipeline/, and there are no runtime import cycles.
 * Checked by `npm run lint` (dependency-cruiser), not by memory.
 */
// Leaves anyone may read: the version string, copyWith (a spread's copy, sharing its class),
// processAlive, endsDone (a journal's last line).
const shared = '(version|copy-with|process-alive|journal-tail)\\.ts';
const layer = (name, comment, folder, may) => ({
  name,
  comment,
  severity: 'error',
  from: { path: `^src/${folder}/` },
  to: { path: '^src/', pathNot: `^src/(${[folder + '/', ...may, shared].join('|')})` },
});
const stage = (name, from, to) => ({
  name,
  comment: `src/pipeline/${from}/ never imports src/pipeline/${to}/: data flows one way.`,
  severity: 'error',
  from: { path: `^src/pipeline/${from}/` },
  to: { path: `^src/pipeline/${to}/` },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles at run time (type-only imports are erased and may go both ways).',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    layer('config-imports', 'config/ may import contract and errors, never cli/.', 'config', [
      'contract/',
      'errors\\.ts',
    ]),
    layer('io-imports', 'io/ may import errors only.', 'io', ['errors\\.ts']),
    layer(
      'pipeline-imports',
      'pipeline/ may import contract, io and errors; the client and the cache arrive as interfaces.',
      'pipeline',
      ['contract/', 'io/', 'errors\\.ts'],
    ),
    layer('cache-imports', 'cache/ may import contract and errors.', 'cache', [
      'contract/',
      'errors\\.ts',
    ]),
    layer('api-imports', 'api/ may import contract and errors.', 'api', [
      'contract/',
      'errors\\.ts',
    ]),
    layer('contract-imports', 'contract/ imports only zod.', 'contract', []),
    layer(
      'sandbox-imports',
      'sandbox/ may import contract and errors, never api/ or pipeline/.',
      'sandbox',
      ['contract/', 'errors\\.ts'],
    ),
    layer('bulk-imports', 'bulk/ (the one-call runs) never imports cli/.', 'bulk', [
      'api/',
      'config/',
      'io/',
      'pipeline/',
      'cache/',
      'contract/',
      'errors\\.ts',
    ]),
    {
      name: 'errors-imports',
      comment: 'errors.ts imports nothing.',
      severity: 'error',
      from: { path: '^src/errors\\.ts$' },
      to: { path: '^src/' },
    },
    stage('mapping-flow', 'mapping', '(run|join|journal)'),
    stage('journal-flow', 'journal', '(run|join|mapping)'),
    stage('join-flow', 'join', 'run'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
