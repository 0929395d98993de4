import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Test temp dirs live under one root that is removed after the run.
    globalSetup: ['test/global-setup.ts'],
    // ...and each test file its own results cache directory (ENRICH_CACHE_DIR).
    setupFiles: ['test/setup-cache-dir.ts'],
  },
});
