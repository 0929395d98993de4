/** A per-key token bucket: `rate` tokens per second, holding at most `burst`. */
export interface Bucket {
  tokens: number;
  updated: number;
}

/** The decision for one request. */
export interface TakeResult {
  ok: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until the next token (at least 1 when refused). */
  resetS: number;
}

/** A full bucket at time `now` (ms). */
export function newBucket(burst: number, now: number): Bucket {
  return { tokens: burst, updated: now };
}

/** Refills `bucket` up to `now` and takes one token if there is one. Mutates the bucket. */
export function takeToken(bucket: Bucket, now: number, rate: number, burst: number): TakeResult {
  const elapsed = Math.max(0, now - bucket.updated) / 1000;
  bucket.tokens = Math.min(burst, bucket.tokens + elapsed * rate);
  bucket.updated = now;
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    const resetS = bucket.tokens >= 1 ? 0 : Math.ceil((1 - bucket.tokens) / rate);
    return { ok: true, remaining: Math.floor(bucket.tokens), resetS };
  }
  return { ok: false, remaining: 0, resetS: Math.max(1, Math.ceil((1 - bucket.tokens) / rate)) };
}

/** The IETF draft headers (`RateLimit-Policy: "default";q=50;w=1`, `RateLimit: "default";r=3;t=1`). */
export function rateLimitHeaders(rate: number, r: TakeResult): Record<string, string> {
  return {
    'RateLimit-Policy': `"default";q=${rate};w=1`,
    RateLimit: `"default";r=${r.remaining};t=${r.resetS}`,
  };
}
