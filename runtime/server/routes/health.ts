import type { ServerScope } from '../context.ts';
import { answer, type RouteHandlers } from '../route.ts';

/** The id `/readyz` asks the store for: never a real session (it fails the session id pattern). */
const PROBE_ID = '.readyz-probe';

/** Longest `/readyz` waits for the store: a load balancer's probe gets an answer within 1 s, even from a hung store. */
const READY_TIMEOUT_MS = 800;

/** The store's answer to the probe, or a rejection once READY_TIMEOUT_MS passed without one. */
function withinReadyTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** `/healthz` (the process answers) and `/readyz` (the store answers too, and says what a commit survives). */
export function healthRoutes(scope: ServerScope, ready: () => boolean): Pick<RouteHandlers, 'GET /healthz' | 'GET /readyz'> {
  return {
    'GET /healthz': (c) => answer(c, { ok: true as const }),
    'GET /readyz': async (c) => {
      if (!ready())
        return answer(c, { ok: false as const, code: 'SERVER_NOT_READY' as const, message: 'the server is still starting' }, 503);
      try {
        const { store } = scope.runtime;
        await withinReadyTimeout(store.load(PROBE_ID));
        // A store can read while it cannot write (SQLite on a full disk): its last commit failure says so.
        const failure = store.writeFailure?.();
        if (failure) {
          return answer(
            c,
            {
              ok: false as const,
              code: 'SERVER_NOT_READY' as const,
              message: `the ${store.name} store cannot write: its last commit failed ${Math.round((Date.now() - failure.at) / 1000)} s ago (${failure.code}: ${failure.message})`,
            },
            503,
          );
        }
        const durability = await withinReadyTimeout(Promise.resolve(store.durability?.()));
        return answer(c, { ok: true as const, store: store.name, ...(durability ? { durability: durability.summary } : {}) });
      } catch (error) {
        scope.options.log({
          level: 'warn',
          code: 'SERVER_NOT_READY',
          message: `the ${scope.runtime.store.name} store does not answer: ${(error as Error).message}`,
        });
        return answer(
          c,
          { ok: false as const, code: 'SERVER_NOT_READY' as const, message: `the ${scope.runtime.store.name} store does not answer` },
          503,
        );
      }
    },
  };
}
