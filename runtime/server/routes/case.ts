import { caseFromLog } from '../../testing/record.ts';
import { serializeCase } from '../../testing/case-file.ts';
import { sessionIdParam, type ServerScope } from '../context.ts';
import { ServerError } from '../errors.ts';
import type { RouteHandlers } from '../route.ts';

const CASE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const CONTEXT_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * `GET /sessions/:id/case?name=NAME&context=a,b`: the session as a regression case file (JSON lines) to save under
 * `machines/<id>/cases/NAME.case.jsonl`: its events from outside, its recorded call results and what it did.
 * `context` picks the final context keys the case expects (default: all).
 */
export function caseRoutes(scope: ServerScope): Pick<RouteHandlers, 'GET /sessions/:id/case'> {
  return {
    'GET /sessions/:id/case': async (c) => {
      const session = scope.runtime.session(sessionIdParam(c));
      const name = c.req.query('name') || `session-${session.id.slice(0, 8).toLowerCase()}`;
      if (!CASE_NAME.test(name))
        throw new ServerError(
          'SERVER_BAD_REQUEST',
          `?name= is a case name: 1-64 characters of a-z 0-9 _ -, starting with a letter or digit (got ${JSON.stringify(name.slice(0, 80))})`,
        );
      const keys = c.req
        .query('context')
        ?.split(',')
        .filter((key) => key !== '');
      for (const key of keys ?? []) {
        if (!CONTEXT_KEY.test(key))
          throw new ServerError(
            'SERVER_BAD_REQUEST',
            `?context= lists context keys (identifiers), not ${JSON.stringify(key.slice(0, 80))}`,
          );
      }
      const snapshot = await session.snapshot();
      const events = await scope.runtime.store.readEvents(session.id, 0);
      const file = caseFromLog(events, snapshot, { name, source: 'service', ...(keys ? { contextKeys: keys } : {}) });
      c.header('Content-Disposition', `attachment; filename="${name}.case.jsonl"`);
      return c.body(serializeCase(file), 200, { 'Content-Type': 'application/x-ndjson; charset=utf-8' });
    },
  };
}
