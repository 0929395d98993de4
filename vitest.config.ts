import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two test files at a time even on a 2-core machine (vitest's default is one fewer than the
    // cores: one): most of a file's time is spent waiting on sandboxes, timers and child
    // processes, so the suite took 498 s with one worker and 290 s with two, here.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Test temp dirs live under one root that is removed after the run.
    globalSetup: ['test/global-setup.ts'],
    // ...and each test file its own results cache directory (ENRICH_CACHE_DIR).
    setupFiles: ['test/setup-cache-dir.ts'],
  },
});
