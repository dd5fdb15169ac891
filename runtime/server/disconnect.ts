import type { ServerLogger } from './log.ts';

/**
 * Cancels a session's generation when the client of a streaming POST stays away longer than the grace period.
 * A client that comes back (any stream of the session) or a generation that finishes on its own clears the timer.
 */
export class DisconnectWatch {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  /** Open streams per session: a client reading any of them is a client that came back. */
  private readonly streams = new Map<string, number>();

  constructor(
    private readonly graceMs: number,
    private readonly log: ServerLogger,
  ) {}

  /** The streaming client of `sessionId` is gone; `cancel` runs after the grace period unless cleared first. */
  clientGone(sessionId: string, cancel: () => Promise<void>) {
    this.clear(sessionId);
    const timer = setTimeout(() => {
      this.timers.delete(sessionId);
      if ((this.streams.get(sessionId) ?? 0) > 0) return;
      this.log({
        level: 'info',
        code: 'SERVER_CLIENT_GONE',
        message: `the client of session ${sessionId} left a streaming request ${this.graceMs} ms ago; cancelling its generation`,
        sessionId,
      });
      cancel().catch((error: unknown) => {
        this.log({
          level: 'error',
          code: 'SERVER_CANCEL_FAILED',
          message: `cancelling session ${sessionId} after its client left failed: ${(error as Error).message}`,
          sessionId,
        });
      });
    }, this.graceMs);
    timer.unref?.();
    this.timers.set(sessionId, timer);
  }

  /** A stream of the session opened; the returned function marks it closed. */
  streamOpened(sessionId: string): () => void {
    this.clear(sessionId);
    this.streams.set(sessionId, (this.streams.get(sessionId) ?? 0) + 1);
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      const left = this.streams.get(sessionId)! - 1;
      if (left === 0) this.streams.delete(sessionId);
      else this.streams.set(sessionId, left);
    };
  }

  /** A client is back, or the generation ended: nothing to cancel. */
  clear(sessionId: string) {
    const timer = this.timers.get(sessionId);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.timers.delete(sessionId);
  }

  /** Whether a cancellation is pending for the session. */
  pending(sessionId: string): boolean {
    return this.timers.has(sessionId);
  }

  close() {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
