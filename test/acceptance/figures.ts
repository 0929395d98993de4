/** Helpers shared by the acceptance suite: short diffs and the figures published in RELIABILITY.md. */
import { appendFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The first line where two outputs differ (a short failure message instead of a huge diff). */
export function firstDifference(a: string, b: string): string | undefined {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] !== y[i]) return `line ${i + 1}:\n  got      ${x[i]}\n  expected ${y[i]}`;
  }
  return undefined;
}

/**
 * Appends one JSON line of figures to the file named by ENRICH_FIGURES (unset: nothing),
 * so `ENRICH_FIGURES=figures.jsonl npx vitest run test/acceptance` gathers RELIABILITY.md's numbers.
 */
export function recordFigure(name: string, data: Record<string, unknown>): void {
  const file = process.env.ENRICH_FIGURES;
  if (file) appendFileSync(file, JSON.stringify({ name, ...data }) + '\n');
}

/** Paths of the files under `dirs` (recursively) that contain `secret`. */
export function filesContaining(dirs: string[], secret: string): string[] {
  const hits: string[] = [];
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!e.isFile()) continue;
      const path = join(e.parentPath, e.name);
      if (readFileSync(path).includes(secret)) hits.push(path);
    }
  }
  return hits;
}
