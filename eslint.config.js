import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/**
 * DESIGN.md section 2 as lint rules: each folder of src/ imports only what its row of the
 * table allows (`except` lists what it may reach besides itself). Checked, not remembered.
 */
const shared = ['version.ts'];
const layers = [
  { target: 'config', may: ['contract', 'errors.ts'] },
  { target: 'io', may: ['errors.ts'] },
  { target: 'pipeline', may: ['contract', 'io', 'errors.ts'] },
  { target: 'cache', may: ['contract', 'errors.ts'] },
  { target: 'api', may: ['contract', 'errors.ts'] },
  { target: 'contract', may: [] },
  { target: 'sandbox', may: ['contract', 'errors.ts'] },
  { target: 'bulk', may: ['api', 'config', 'io', 'pipeline', 'cache', 'contract', 'errors.ts'] },
];
// Inside pipeline/ the stages flow one way: mapping -> run, join; journal is storage.
const stages = [
  { target: 'pipeline/mapping', from: ['pipeline/run', 'pipeline/join', 'pipeline/journal'] },
  { target: 'pipeline/journal', from: ['pipeline/run', 'pipeline/join', 'pipeline/mapping'] },
  { target: 'pipeline/join', from: ['pipeline/run'] },
];
const zones = [
  ...layers.map(({ target, may }) => ({
    target: `./src/${target}`,
    from: './src',
    except: [`./${target}`, ...[...may, ...shared].map((m) => `./${m}`)],
    message: `DESIGN.md section 2: src/${target}/ may import only ${may.join(', ') || 'itself'}.`,
  })),
  {
    target: './src/errors.ts',
    from: './src',
    except: ['./errors.ts'],
    message: 'errors.ts imports nothing.',
  },
  ...stages.flatMap(({ target, from }) =>
    from.map((f) => ({
      target: `./src/${target}`,
      from: `./src/${f}`,
      message: `src/${target}/ never imports src/${f}/: data flows one way (DESIGN.md section 2).`,
    })),
  ),
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench/out/', 'reports/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-console': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // Without these, import-x reads no .ts file and no-cycle silently checks nothing.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones }],
      // Small functions and shallow nesting (DESIGN.md section 3); closures count toward the
      // function that holds them, so a factory stays small too.
      'max-lines-per-function': ['warn', { max: 80, skipBlankLines: true, skipComments: true }],
      'max-depth': ['error', 4],
    },
  },
  {
    files: ['bin/**/*.js', 'bench/**/*.js', 'eslint.config.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
