import type { InvokeSpec } from '@flowing/spec';
import type { z } from 'zod';
import type { CallContext } from './context.ts';

/** What a call learns of the invoke it belongs to. */
export interface CallSpec {
  invoke?: InvokeSpec;
  outputSchema?: z.ZodType;
}

/** Where an invoked actor's call runs: the session that owns the actor system (its call ledger). */
export interface CallSite {
  /**
   * Runs one call of the invoke `invokeId` with its input: builds its CallContext and Deadline, tracks it for
   * cancel, and releases them when `body` settles.
   */
  call(invokeId: string, input: unknown, spec: CallSpec, body: (call: CallContext) => Promise<unknown>): Promise<unknown>;
  /** XState stopped the invoke's actor (its state was left, the session stopped): its call is aborted. */
  stop(invokeId: string): void;
  /** True while the call of the invoke is paused (it waits outside the session, which is quiet meanwhile). */
  isPaused(invokeId: string): boolean;
}

/**
 * The live sessions of one runtime by their XState actor system: how an invoked actor finds the session it runs
 * in. A session registers its system when its actor starts and removes it when the actor stops. (A WeakMap's
 * table only shrinks on delete, so entries are deleted rather than left to the GC.)
 */
export class CallDirectory {
  private readonly sites = new WeakMap<object, CallSite>();

  register(system: object, site: CallSite): void {
    this.sites.set(system, site);
  }

  unregister(system: object): void {
    this.sites.delete(system);
  }

  get(system: object): CallSite | undefined {
    return this.sites.get(system);
  }
}
