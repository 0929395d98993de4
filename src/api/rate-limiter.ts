/**
 * One rate limiter per client, shared by every call (submits, polls, single lookups), so
 * what one answer teaches slows all of them. It honours what the service says when it
 * says it (`Retry-After`, `RateLimit-Remaining`/`RateLimit-Reset`, the IETF draft's
 * combined `RateLimit`), and otherwise learns from bare 429s: each halves the allowed
 * rate (at most once per slot, so a burst of 429s counts once), and each success adds a
 * little back (AIMD). Clock and sleep are injected.
 */

/** What the limiter needs from its environment. */
export interface LimiterEnv {
  clock: { now(): number };
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * Thrown by `acquire` when the service has asked for a wait that ends after the caller's
 * deadline: the call would only come back before it was told to, so it does not wait at all.
 */
export class WaitPastDeadline extends Error {
  constructor(
    /** Epoch ms until which the service asked this kind of call to wait. */
    readonly until: number,
  ) {
    super(`the service asked to wait until ${new Date(until).toISOString()}`);
    this.name = 'WaitPastDeadline';
  }
}

/**
 * Which calls a 429 holds back. One answered to a POST (a charged submission or lookup) holds
 * back the POSTs: a service may refuse new work (a quota of jobs or of stored results) while it
 * still serves results, which a run must download before they expire. One answered to any
 * other call, and a quota used up (`RateLimit` remaining 0), hold back every call.
 */
export type LimitScope = 'post' | 'any';

/** The shared limiter of one client. */
export interface RateLimiter {
  /**
   * Waits for the next slot, or until `deadline` (epoch ms) at the latest when only pacing
   * holds it back. Throws WaitPastDeadline at once when the service asked for a wait (a
   * Retry-After, a quota's reset) that ends after `deadline`.
   */
  acquire(deadline: number, signal?: AbortSignal, scope?: LimitScope): Promise<void>;
  /**
   * Learns from an answer's status and headers (`retryAfterMs`: its Retry-After, read), to a
   * call of `scope`. Returns the end (epoch ms) of the wait a 429 told, when it told one.
   */
  observe(
    status: number,
    headers: Record<string, string | string[] | undefined>,
    retryAfterMs?: number,
    scope?: LimitScope,
  ): number | undefined;
  /** The rate currently allowed, in requests per second (Infinity: unlimited). */
  rate(): number;
  /** How many 429s it has observed. */
  throttled(): number;
}

/** The slowest the limiter goes on its own: one request every 20 s. */
export const MIN_RATE = 0.05;
/** What the service's quota said, read from the RateLimit headers. */
interface Quota {
  remaining?: number;
  resetMs?: number;
}

function header(h: Record<string, string | string[] | undefined>, name: string) {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

function resetToMs(seconds: number, now: number): number {
  // A few services send an epoch time where the draft says delta-seconds.
  return seconds > 1e9 ? Math.max(0, seconds * 1000 - now) : seconds * 1000;
}

/** Reads `RateLimit-Remaining`/`-Reset`, or the combined `RateLimit` (`r=0;t=5` or `remaining=0, reset=5`). */
export function readQuota(h: Record<string, string | string[] | undefined>, now: number): Quota {
  const out: Quota = {};
  const combined = header(h, 'ratelimit') ?? '';
  const remaining =
    header(h, 'ratelimit-remaining') ?? /(?:^|[;,\s])(?:remaining|r)=(\d+)/.exec(combined)?.[1];
  const reset = header(h, 'ratelimit-reset') ?? /(?:^|[;,\s])(?:reset|t)=(\d+)/.exec(combined)?.[1];
  // Stryker disable next-line MethodExpression: Number() ignores surrounding whitespace itself
  const r = Number(remaining?.trim());
  // Stryker disable next-line MethodExpression: Number() ignores surrounding whitespace itself
  const t = Number(reset?.trim());
  if (remaining !== undefined && Number.isFinite(r) && r >= 0) out.remaining = r;
  if (reset !== undefined && Number.isFinite(t) && t >= 0) out.resetMs = resetToMs(t, now);
  return out;
}

/** Builds a limiter; `ceiling` caps the rate (requests per second) when given. */
export function createRateLimiter(env: LimiterEnv, ceiling?: number): RateLimiter {
  const cap = ceiling !== undefined && ceiling > 0 ? ceiling : Infinity;
  let rate = cap;
  let nextSlot = 0;
  // Held back until: every call, and the POSTs alone (a 429 answered to a POST).
  let blockedUntil = 0;
  let postsBlockedUntil = 0;
  let lastDecrease = -Infinity;
  // Stryker disable next-line ArrayDeclaration: a non-number entry is never counted (NaN comparisons are false) and is the first shifted out
  const grants: number[] = [];
  let throttled = 0;
  const gap = () => (Number.isFinite(rate) ? 1000 / rate : 0);

  const decrease = (now: number) => {
    if (now - lastDecrease < gap()) return;
    // Unlimited until now: start from what was actually sent in the last second.
    const base = Number.isFinite(rate) ? rate : grants.filter((g) => g > now - 1000).length || 1;
    rate = Math.max(MIN_RATE, base / 2);
    lastDecrease = now;
  };
  const increase = () => {
    if (!Number.isFinite(rate)) return;
    rate = Math.min(cap, rate + Math.max(0.1, rate * 0.05));
  };

  return {
    // Stryker disable next-line StringLiteral: every scope but 'post' holds back alike
    async acquire(deadline, signal, scope = 'any') {
      const now = env.clock.now();
      const told = scope === 'post' ? Math.max(blockedUntil, postsBlockedUntil) : blockedUntil;
      if (told > deadline && told > now) throw new WaitPastDeadline(told);
      const at = Math.max(now, nextSlot, told);
      nextSlot = at + gap();
      grants.push(at);
      if (grants.length > 64) grants.shift();
      const wait = Math.min(at, Math.max(deadline, now)) - now;
      if (wait > 0) await env.sleep(wait, signal);
    },
    // Stryker disable next-line StringLiteral: every scope but 'post' holds back alike
    observe(status, headers, retryAfterMs, scope = 'any') {
      const now = env.clock.now();
      const quota = readQuota(headers, now);
      if (quota.remaining === 0 && quota.resetMs !== undefined) {
        blockedUntil = Math.max(blockedUntil, now + quota.resetMs);
      }
      if (status === 429) {
        throttled++;
        const told = retryAfterMs ?? (quota.remaining === 0 ? quota.resetMs : undefined);
        // Told when to come back: that is honoured as is. A bare 429 slows every call.
        if (told === undefined) decrease(now);
        const until = now + (told ?? gap());
        if (scope === 'post') postsBlockedUntil = Math.max(postsBlockedUntil, until);
        else blockedUntil = Math.max(blockedUntil, until);
        return told === undefined ? undefined : until;
      }
      if (status >= 200 && status < 300) increase();
      return undefined;
    },
    rate: () => rate,
    throttled: () => throttled,
  };
}
