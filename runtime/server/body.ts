import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { z } from 'zod';
import { jsonNestingDepth } from '@flowing/spec';
import { formatIssues } from '../errors.ts';
import { ServerError } from './errors.ts';
import type { ResolvedServerOptions } from './options.ts';

/** Refuses bodies over the limit with 413 before they are parsed (by Content-Length, or while reading a chunked one). */
export function bodySizeGuard(options: ResolvedServerOptions): MiddlewareHandler {
  return bodyLimit({
    maxSize: options.maxBodyBytes,
    onError: () => {
      throw new ServerError('SERVER_BODY_TOO_LARGE', `the request body is larger than ${options.maxBodyBytes} bytes`, {
        details: { limit: options.maxBodyBytes },
      });
    },
  });
}

/** Reads the JSON body (an empty body is `{}`), refusing deep nesting before JSON.parse recurses into it. */
export async function readJson(c: Context, options: ResolvedServerOptions): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  if (jsonNestingDepth(text, options.maxJsonDepth) > options.maxJsonDepth) {
    throw new ServerError('SERVER_BAD_JSON', `the JSON body is nested deeper than ${options.maxJsonDepth} levels`, {
      details: { maxDepth: options.maxJsonDepth },
    });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ServerError('SERVER_BAD_JSON', `the body is not valid JSON: ${(error as Error).message.slice(0, 200)}`);
  }
}

/** Reads a JSON object body; anything else (an array, a string) is SERVER_BAD_REQUEST. */
export async function readJsonObject(c: Context, options: ResolvedServerOptions): Promise<Record<string, unknown>> {
  const body = await readJson(c, options);
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new ServerError('SERVER_BAD_REQUEST', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** A body checked against its route's schema (from @flowing/protocol); a misfit is SERVER_BAD_REQUEST naming the field. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new ServerError('SERVER_BAD_REQUEST', `the body does not fit this route: ${formatIssues(parsed.error.issues)}`);
  return parsed.data;
}
