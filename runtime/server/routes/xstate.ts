import { intQuery, sessionIdParam, type ServerScope } from '../context.ts';
import { ServerError } from '../errors.ts';
import { answer, type RouteHandlers } from '../route.ts';

/**
 * `GET /sessions/:id/xstate?afterSeq=N`: XState's own inspection records of the session (actors, events, microsteps,
 * snapshots; see `XStateRecord`), as far as this process ran it and kept them: `{ records, dropped }`. Each record's
 * `afterSeq` is the seq of the log event it followed, so the records leading to event S have `afterSeq` S - 1.
 * Errors: 404 SESSION_NOT_FOUND, 404 XSTATE_TRACE_OFF (the server was created without `xstateTrace`).
 */
export function xstateRoutes(scope: ServerScope): Pick<RouteHandlers, 'GET /sessions/:id/xstate'> {
  return {
    'GET /sessions/:id/xstate': async (c) => {
      const id = sessionIdParam(c);
      const afterSeq = intQuery(c, 'afterSeq', 0);
      const trace = scope.options.xstateTrace;
      if (!trace)
        throw new ServerError(
          'XSTATE_TRACE_OFF',
          'this server keeps no XState inspection records; create it with createServer(runtime, { xstateTrace }) and the runtime with { inspect: xstateTrace.inspect }',
        );
      await scope.runtime.session(id).snapshot(); // SESSION_NOT_FOUND for an unknown id
      return answer(c, { records: trace.read(id, { afterSeq }), dropped: trace.dropped(id) });
    },
  };
}
