import { it } from 'vitest';

/**
 * A test that needs root (mount, mknod): run as root, as on these machines and in CI. As
 * another user it is skipped, with "(root: ...)" in its name, rather than failed. Under CI
 * (`CI` set; `.ci/run` sets it) it always runs, and fails if it cannot: CI never loses it
 * quietly.
 */
export const rootTest = it.runIf(process.getuid?.() === 0 || process.env.CI !== undefined);
