import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One temp root per test run: every test's temp dirs (and those of the CLI processes the e2e
 * tests start, which inherit TMPDIR) go under it, and it is removed when the run ends, so
 * runs no longer leave thousands of `enrich-*` dirs in /tmp.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'enrich-tests-'));
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
