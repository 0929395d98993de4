import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What the API client asks of a store of Idempotency-Key lessons (structural: no api/ import). */
export interface IdempotencyLessons {
  get(scope: string): boolean | undefined;
  set(scope: string, honoured: boolean): void;
}

type Saved = Record<string, { honoured: boolean; at: string }>;

function memoPath(stateDir: string): string {
  return join(stateDir, 'idempotency.json');
}

function readAll(stateDir: string): Saved {
  try {
    const data: unknown = JSON.parse(readFileSync(memoPath(stateDir), 'utf8'));
    return data && typeof data === 'object' && !Array.isArray(data) ? (data as Saved) : {};
  } catch {
    // Missing or damaged: nothing learned, so lost answers are not repeated (the safe side).
    return {};
  }
}

/**
 * Which service endpoints (origin + path) echoed an Idempotency-Key, kept across runs in
 * the state dir, so a resumed run repeats a lost submission only to a service that showed
 * it de-duplicates. Best effort, like the credits memo: a write error is not a failure.
 */
export function fileIdempotencyStore(
  stateDir: string,
  now: () => Date = () => new Date(),
): IdempotencyLessons {
  const known = readAll(stateDir);
  return {
    get: (scope) => {
      const entry = known[scope];
      return typeof entry?.honoured === 'boolean' ? entry.honoured : undefined;
    },
    set(scope, honoured) {
      if (known[scope]?.honoured === honoured) return;
      known[scope] = { honoured, at: now().toISOString() };
      try {
        const all = { ...readAll(stateDir), [scope]: known[scope] };
        mkdirSync(stateDir, { recursive: true, mode: 0o700 });
        const tmp = `${memoPath(stateDir)}.${process.pid}.tmp`;
        writeFileSync(tmp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
        renameSync(tmp, memoPath(stateDir));
      } catch {
        // Kept in memory for this run; the next one learns again.
      }
    },
  };
}
