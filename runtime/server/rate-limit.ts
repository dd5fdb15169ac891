/** A refill rate and a burst size: `burst` requests at once, then `perSecond` on average. */
export interface RateSpec {
  perSecond: number;
  burst: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets by key (a client address, a session id). `take` answers 0 when the request may go ahead, otherwise
 * the milliseconds until a token is back (the Retry-After). Buckets that refilled completely are dropped, so the
 * map holds only keys seen in the last `burst / perSecond` seconds.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private lastSweep = 0;

  constructor(
    private readonly spec: RateSpec,
    private readonly now: () => number = Date.now,
  ) {
    if (!(spec.perSecond > 0) || !(spec.burst >= 1))
      throw new RangeError(`a rate limit needs perSecond > 0 and burst >= 1 (got ${spec.perSecond}, ${spec.burst})`);
  }

  take(key: string): number {
    const now = this.now();
    this.sweep(now);
    const bucket = this.buckets.get(key) ?? { tokens: this.spec.burst, at: now };
    bucket.tokens = Math.min(this.spec.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.spec.perSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - bucket.tokens) / this.spec.perSecond) * 1000);
  }

  /** Keys currently tracked (for tests of the sweep). */
  get size(): number {
    return this.buckets.size;
  }

  private sweep(now: number) {
    const fullAfterMs = (this.spec.burst / this.spec.perSecond) * 1000;
    if (now - this.lastSweep < fullAfterMs) return;
    this.lastSweep = now;
    for (const [key, bucket] of this.buckets) if (now - bucket.at >= fullAfterMs) this.buckets.delete(key);
  }
}
