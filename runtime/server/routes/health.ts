import type { Hono } from 'hono';
import type { ServerScope } from '../context.ts';

/** The id `/readyz` asks the store for: never a real session (it fails the session id pattern). */
const PROBE_ID = '.readyz-probe';

/** `/healthz` (the process answers) and `/readyz` (the store answers too). */
export function healthRoutes(app: Hono, scope: ServerScope, ready: () => boolean) {
  app.get('/healthz', (c) => c.json({ ok: true }));
  app.get('/readyz', async (c) => {
    if (!ready()) return c.json({ ok: false, code: 'SERVER_NOT_READY', message: 'the server is still starting' }, 503);
    try {
      await scope.runtime.store.load(PROBE_ID);
      return c.json({ ok: true, store: scope.runtime.store.name });
    } catch (error) {
      scope.options.log({ level: 'warn', code: 'SERVER_NOT_READY', message: `the ${scope.runtime.store.name} store does not answer: ${(error as Error).message}` });
      return c.json({ ok: false, code: 'SERVER_NOT_READY', message: `the ${scope.runtime.store.name} store does not answer` }, 503);
    }
  });
}
