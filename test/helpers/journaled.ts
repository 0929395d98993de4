import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** True when a line of a journal under the state dir `dir` matches (none yet: false). */
export function journaled(dir: string, line: RegExp): boolean {
  const walk = (d: string): string[] =>
    (existsSync(d) ? readdirSync(d) : []).flatMap((f) => {
      const p = join(d, f);
      return statSync(p).isDirectory() ? walk(p) : [p];
    });
  return walk(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .some((f) => line.test(readFileSync(f, 'utf8')));
}

/** Waits (up to 10 s) until a journal line under `dir` matches; false when none did. */
export async function untilJournaled(dir: string, line: RegExp): Promise<boolean> {
  for (let i = 0; i < 400 && !journaled(dir, line); i++)
    await new Promise((r) => setTimeout(r, 25));
  return journaled(dir, line);
}
