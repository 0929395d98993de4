import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// No test writes to the real OS cache directory: each test file gets its own results cache
// (under the run's temp root, see global-setup.ts), as it gets its own state directories.
process.env.ENRICH_CACHE_DIR = mkdtempSync(join(tmpdir(), 'enrich-cache-'));
