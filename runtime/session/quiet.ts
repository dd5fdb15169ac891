/**
 * Whether a run has work left: quiet when the session waits for input, finished, failed or was cancelled.
 * `whenQuiet` resolves at that moment.
 */
export class Quiet {
  private quiet: boolean;
  private waiters: Array<() => void> = [];

  constructor(initially: boolean) {
    this.quiet = initially;
  }

  get is(): boolean {
    return this.quiet;
  }

  /** There is work again (an event is applied, timers fire). */
  busy(): void {
    this.quiet = false;
  }

  set(): void {
    this.quiet = true;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  whenQuiet(): Promise<void> {
    if (this.quiet) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Drops waiters of a parked run (nobody waits on a run kept for later). */
  reset(): void {
    this.waiters = [];
  }
}
