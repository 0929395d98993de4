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
 * How long a lesson learned by an earlier process is trusted: a day. A service may change
 * behind the same address (a new version, another gateway); a lesson this process learned
 * itself is always current.
 */
export const IDEMPOTENCY_LESSON_MS = 86_400_000;

/**
 * Which service endpoints (origin + path, per account) echoed an Idempotency-Key, kept across
 * runs in the state dir for a day, so a resumed run repeats a lost submission only to a
 * service that showed it de-duplicates. Best effort, like the credits memo: a write error is
 * not a failure.
 */
export function fileIdempotencyStore(
  stateDir: string,
  now: () => Date = () => new Date(),
): IdempotencyLessons {
  sweepMemo(memoPath(stateDir));
  const known = readAll(stateDir);
  const get = (scope: string) => {
    const entry = known[scope];
    if (typeof entry?.honoured !== 'boolean') return undefined;
    const age = now().getTime() - Date.parse(entry.at);
    return age >= 0 && age < IDEMPOTENCY_LESSON_MS ? entry.honoured : undefined;
  };
  return {
    get,
    set(scope, honoured) {
      if (get(scope) === honoured) return; // known, and learned within the day
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
