import type { Hono } from 'hono';
import type { ServerScope } from '../context.ts';

/** The id `/readyz` asks the store for: never a real session (it fails the session id pattern). */
const PROBE_ID = '.readyz-probe';

/** `/healthz` (the process answers) and `/readyz` (the store answers too, and says what a commit survives). */
export function healthRoutes(app: Hono, scope: ServerScope, ready: () => boolean) {
  app.get('/healthz', (c) => c.json({ ok: true }));
  app.get('/readyz', async (c) => {
    if (!ready()) return c.json({ ok: false, code: 'SERVER_NOT_READY', message: 'the server is still starting' }, 503);
    try {
      const { store } = scope.runtime;
      await store.load(PROBE_ID);
      const durability = await store.durability?.();
      return c.json({ ok: true, store: store.name, ...(durability ? { durability: durability.summary } : {}) });
    } catch (error) {
      scope.options.log({ level: 'warn', code: 'SERVER_NOT_READY', message: `the ${scope.runtime.store.name} store does not answer: ${(error as Error).message}` });
      return c.json({ ok: false, code: 'SERVER_NOT_READY', message: `the ${scope.runtime.store.name} store does not answer` }, 503);
    }
  });
}
