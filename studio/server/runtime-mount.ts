import { routeUrl, type MachineStateCounts } from '@flowing/protocol';
import type { Context } from 'hono';
import { API_PREFIX } from './api-target.ts';
import { StudioError } from './errors.ts';

/** Where the runtime API lives on the studio server (the Inspect mode's sessions, events and streams). */
export const RUNTIME_PREFIX = `${API_PREFIX}/runtime`;

/** Anything with a Fetch-API handler: the Hono app `createServer(runtime)` from `@flowing/runtime/server` returns. */
export interface RuntimeApp {
  fetch(request: Request, env?: unknown): Response | Promise<Response>;
  /** Called when the studio stops (closes the store); optional. */
  close?(): Promise<void>;
}

/**
 * The runtime the studio mounts: an app, or a function that makes one on the first request (loading the project's
 * generated machines and opening the store then, so the studio page is served without waiting for them).
 */
export type RuntimeAppSource = RuntimeApp | (() => Promise<RuntimeApp>);

/** The `/api/runtime/*` handler, `stateCounts` for the studio's own questions, and `close()` for when the studio stops. */
export type RuntimeHandler = ((c: Context) => Promise<Response>) & {
  /** `GET /machines/:id/states` of the mounted runtime; undefined when it does not serve the machine. */
  stateCounts(machineId: string): Promise<MachineStateCounts | undefined>;
  close(): Promise<void>;
};

/** Headers the studio's own guard has already decided on; the mounted runtime would refuse a same-origin page for them. */
const DECIDED_HEADERS = ['origin', 'sec-fetch-site', 'sec-fetch-mode', 'sec-fetch-dest'];

/**
 * The handler behind `/api/runtime/*`: forwards the request, with the prefix taken off, to the mounted runtime app.
 * The studio's Host/Origin guard has checked the raw request before this runs (listener.ts), so the runtime sees a
 * loopback request from its own page: the Origin headers are dropped and Host is its loopback address.
 */
export function runtimeHandler(source: RuntimeAppSource | undefined): RuntimeHandler {
  let loading: Promise<RuntimeApp> | undefined;
  const load = (): Promise<RuntimeApp> => {
    if (typeof source !== 'function') return Promise.resolve(source as RuntimeApp);
    loading ??= source().catch((error: unknown) => {
      loading = undefined; // a later request tries again (after `flowing codegen`, say)
      const coded = error as { code?: unknown; message?: unknown };
      throw new StudioError(
        'STUDIO_RUNTIME_UNAVAILABLE',
        `the studio's runtime could not start: ${typeof coded.code === 'string' ? `${coded.code} ` : ''}${String(coded.message ?? error)}`,
      );
    });
    return loading;
  };
  const handler = async (c: Context): Promise<Response> => {
    if (!source) {
      throw new StudioError(
        'STUDIO_RUNTIME_UNAVAILABLE',
        'this studio was started without a runtime; start it with `flowing studio` (or `npm start`), or connect to a `flowing serve` URL',
      );
    }
    const app = await load();
    const raw = c.req.raw;
    const url = new URL(raw.url);
    const path = url.pathname.slice(RUNTIME_PREFIX.length) || '/';
    const headers = new Headers(raw.headers);
    for (const name of DECIDED_HEADERS) headers.delete(name);
    headers.set('host', `127.0.0.1${url.port ? `:${url.port}` : ''}`);
    const hasBody = raw.method !== 'GET' && raw.method !== 'HEAD';
    const forwarded = new Request(`http://127.0.0.1${url.port ? `:${url.port}` : ''}${path}${url.search}`, {
      method: raw.method,
      headers,
      body: hasBody ? raw.body : null,
      signal: raw.signal,
      ...(hasBody ? { duplex: 'half' } : {}),
    } as RequestInit);
    return app.fetch(forwarded, c.env);
  };
  return Object.assign(handler, {
    async stateCounts(machineId: string): Promise<MachineStateCounts | undefined> {
      if (!source) return undefined;
      const app = await load();
      const response = await app.fetch(
        new Request(`http://127.0.0.1${routeUrl('GET /machines/:id/states', { id: machineId })}`, { headers: { host: '127.0.0.1' } }),
      );
      return response.ok ? ((await response.json()) as MachineStateCounts) : undefined;
    },
    async close() {
      const app = typeof source === 'function' ? await loading?.catch(() => undefined) : source;
      await app?.close?.();
    },
  });
}
