/** Helpers shared by the acceptance suite: short diffs and the figures published in RELIABILITY.md. */
import { appendFileSync } from 'node:fs';

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
