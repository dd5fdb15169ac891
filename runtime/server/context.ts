import { SESSION_ID_PATTERN } from '@flowing/protocol';
import type { Context } from 'hono';
import type { Runtime } from '../runtime.ts';
import type { DisconnectWatch } from './disconnect.ts';
import { ServerError } from './errors.ts';
import type { ResolvedServerOptions } from './options.ts';

/** What every route handler of one server shares. */
export interface ServerScope {
  runtime: Runtime;
  options: ResolvedServerOptions;
  /** Throws 429 when the session is over its write rate. */
  checkSessionRate(sessionId: string): void;
  disconnects: DisconnectWatch;
}

/** The `:id` path parameter, refused unless it is a plain id (no dots, slashes or encoded tricks reach the store). */
export function sessionIdParam(c: Context): string {
  const id = c.req.param('id') ?? '';
  if (!SESSION_ID_PATTERN.test(id)) {
    throw new ServerError(
      'SERVER_BAD_SESSION_ID',
      `${JSON.stringify(id.slice(0, 140))} is not a session id (1-128 characters of A-Z a-z 0-9 _ -)`,
    );
  }
  return id;
}

/** A non-negative integer query parameter, or `fallback` when absent. */
export function intQuery(
  c: Context,
  name: string,
  fallback: number,
  code: 'SERVER_BAD_REQUEST' | 'SERVER_BAD_EVENT_ID' = 'SERVER_BAD_REQUEST',
): number {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,15}$/.test(raw))
    throw new ServerError(code, `?${name}= must be a non-negative integer (got ${JSON.stringify(raw.slice(0, 40))})`);
  return Number(raw);
}
