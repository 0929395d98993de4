import { join } from 'node:path';
import { readMemo, sweepMemo, writeMemo } from './memo-file.js';

/** What the API client asks of a store of Idempotency-Key lessons (structural: no api/ import). */
export interface IdempotencyLessons {
  get(scope: string): boolean | undefined;
  set(scope: string, honoured: boolean): void;
}

type Saved = Record<string, { honoured: boolean; at: string }>;

function memoPath(stateDir: string): string {
  return join(stateDir, 'idempotency.json');
}

/** Missing or damaged: nothing learned, so lost answers are not repeated (the safe side). */
function readAll(stateDir: string): Saved {
  return readMemo<Saved[string]>(memoPath(stateDir));
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
  sweepMemo(memoPath(stateDir));
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
        writeMemo(memoPath(stateDir), all);
      } catch {
        // Kept in memory for this run; the next one learns again.
      }
    },
  };
}
