import type { MiddlewareHandler } from 'hono';
import { FlowingError } from '../errors.ts';
import type { SessionStore } from '../store/types.ts';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Every POST route writes sessions. A store that cannot take writes at all — opened read-only, or fenced after
 * another process took its SQLite file over — refuses them here, before the runtime applies an event: an
 * idempotent tool runs before the commit that would be refused, and must not run for a step that can never be stored.
 */
export function storeWriteGuard(store: SessionStore): MiddlewareHandler {
  return async (c, next) => {
    if (!READS.has(c.req.method)) {
      if (store.readOnly)
        throw new FlowingError('STORE_READ_ONLY', `the ${store.name} store of this server was opened read-only; it serves reads only`);
      const failure = store.writeFailure?.();
      if (failure?.code === 'STORE_FENCED') throw new FlowingError('STORE_FENCED', failure.message);
    }
    await next();
  };
}
