// The resolve hook of record-modules.mjs.
import { appendFileSync } from 'node:fs';
import process from 'node:process';

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  appendFileSync(process.env.ENRICH_TEST_MODULES_OUT, `${resolved.url}\n`);
  return resolved;
}
