import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Reads `read(p)`, or gives `gone` when `p` vanished meanwhile: a live run creates and removes
 * entries under its state dir (a claim's `.mutex`, a journal's temp) while a test looks.
 */
function unlessGone<T>(p: string, read: (p: string) => T, gone: T): T {
  try {
    return read(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return gone;
    throw e;
  }
}

/** True when a line of a journal under the state dir `dir` matches (none yet: false). */
export function journaled(dir: string, line: RegExp): boolean {
  const walk = (d: string): string[] =>
    unlessGone(d, (x) => readdirSync(x), []).flatMap((f) => {
      const p = join(d, f);
      return unlessGone(p, (x) => statSync(x).isDirectory(), false) ? walk(p) : [p];
    });
  return walk(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .some((f) => line.test(unlessGone(f, (x) => readFileSync(x, 'utf8'), '')));
}

/** Waits (up to 10 s) until a journal line under `dir` matches; false when none did. */
export async function untilJournaled(dir: string, line: RegExp): Promise<boolean> {
  for (let i = 0; i < 400 && !journaled(dir, line); i++)
    await new Promise((r) => setTimeout(r, 25));
  return journaled(dir, line);
}
