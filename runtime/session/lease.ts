import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { FlowingError, type FlowError } from '../errors.ts';
import type { SessionLeases } from '../store/types.ts';

/** How long an operation waits for a session another process is stepping, before SESSION_LEASED. */
export const DEFAULT_LEASE_WAIT_MS = 5_000;
/** First and longest pause between two attempts to take a lease another process holds. */
const POLL_MIN_MS = 5;
const POLL_MAX_MS = 50;

export interface LeaseOptions {
  /**
   * How long an event (or resume, or cancel) for a session another process is stepping waits for that process to
   * finish its step (default 5000 ms); after that it is refused with SESSION_LEASED (HTTP 409 with Retry-After).
   */
  waitMs?: number;
}

/** A lease this process holds on one session; renewed in the background until released or lost. */
export interface HeldLease {
  /** The fencing token every commit made under this lease carries. */
  readonly token: number;
  /** Called once when the lease is lost while held: renewal refused, or not confirmed within the TTL. */
  onLost(listener: (error: FlowError) => void): void;
  release(): Promise<void>;
}

/**
 * The runtime's side of session leases: takes a session's lease before a step (waiting a bounded time for another
 * process to finish its own), renews it every third of its TTL while the step runs, and reports a loss. The holder
 * counts its lease valid only until the TTL after the last renewal it *sent*, so a renewal answered late (a pause,
 * a slow network) never extends the time it believes it holds the lease.
 */
export class LeaseKeeper {
  /** This runtime's owner id in lease records (host, pid and a random part: two runtimes in one process differ). */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

  constructor(
    private readonly leases: SessionLeases,
    private readonly options: LeaseOptions = {},
  ) {}

  /** Takes the lease of `sessionId`, waiting up to `waitMs` while another process holds it; SESSION_LEASED after that. */
  async hold(sessionId: string, options: { create?: boolean; waitMs?: number } = {}): Promise<HeldLease> {
    const waitMs = options.waitMs ?? this.options.waitMs ?? DEFAULT_LEASE_WAIT_MS;
    const deadline = performance.now() + waitMs;
    let pause = POLL_MIN_MS;
    for (;;) {
      const sentAt = performance.now();
      const attempt = await this.leases.acquire(sessionId, this.owner, { create: options.create ?? false });
      if (attempt.granted) return this.held(sessionId, attempt.token, sentAt);
      const left = deadline - performance.now();
      if (left <= 0) {
        const retryAfterMs = Math.max(1, Math.ceil(attempt.retryInMs));
        throw new FlowingError(
          'SESSION_LEASED',
          `session ${sessionId} is being stepped by another process (its lease ends within ${retryAfterMs} ms unless renewed); retry later`,
          { details: { retryAfterMs } },
        );
      }
      const jitter = 0.5 + Math.random();
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, attempt.retryInMs, pause * jitter)));
      pause = Math.min(POLL_MAX_MS, pause * 2);
    }
  }

  private held(sessionId: string, token: number, sentAt: number): HeldLease {
    const { leases } = this;
    const ttlMs = leases.ttlMs;
    let validUntil = sentAt + ttlMs;
    let state: 'held' | 'released' | 'lost' = 'held';
    let lostError: FlowError | undefined;
    const listeners: Array<(error: FlowError) => void> = [];
    const lose = (error: FlowError) => {
      if (state !== 'held') return;
      state = 'lost';
      lostError = error;
      clearInterval(timer);
      for (const listener of listeners.splice(0)) listener(error);
    };
    let renewing = false;
    const timer = setInterval(
      () => {
        if (state !== 'held') return;
        if (performance.now() >= validUntil) {
          lose({
            code: 'LEASE_LOST',
            message: `the lease of session ${sessionId} was not renewed within its ${ttlMs} ms; this process stopped stepping the session`,
          });
          return;
        }
        if (renewing) return;
        renewing = true;
        const sent = performance.now();
        leases
          .renew(sessionId, this.owner, token)
          .then(
            (ok) => {
              if (ok) validUntil = Math.max(validUntil, sent + ttlMs);
              else
                lose({
                  code: 'LEASE_LOST',
                  message: `the lease of session ${sessionId} expired and another process took the session over; this process stopped stepping it`,
                });
            },
            () => {
              // Redis did not answer: keep trying until the lease would have expired (checked above).
            },
          )
          .finally(() => {
            renewing = false;
          });
      },
      Math.max(10, Math.floor(ttlMs / 3)),
    );
    timer.unref();
    return {
      token,
      onLost(listener) {
        if (state === 'lost') listener(lostError!);
        else if (state === 'held') listeners.push(listener);
      },
      async release() {
        if (state !== 'held') return;
        state = 'released';
        clearInterval(timer);
        // A failed release only means the lease lingers until its TTL; the next holder waits that long at most.
        await leases.release(sessionId, token).catch(() => {});
      },
    };
  }
}
