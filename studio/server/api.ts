import type { HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { limitBody, readJson } from './body.ts';
import type { StudioContext } from './context.ts';
import { API_PREFIX, rawApiPathRefusal } from './api-target.ts';
import { caseNameFrom, listCases, saveCase, saveCaseBody } from './cases.ts';
import { errorResponse, StudioError } from './errors.ts';
import { createMachine, deleteMachine } from './machine-lifecycle.ts';
import { generateMachine } from './generate.ts';
import { listMachines, loadMachine, parseLoose, saveBody, saveMachine } from './machines.ts';
import { machineIdFrom } from './paths.ts';
import { createTool, listTools } from './tools.ts';
import { checkMachine } from './type-check.ts';

/** What every studio handler sees: the Node request and response behind the Fetch API ones. */
export type StudioEnv = { Bindings: HttpBindings };
type Handler = (c: Context<StudioEnv>) => Promise<Response>;

const idParam = (c: Context<StudioEnv>) => machineIdFrom(c.req.param('id') ?? '');

/** Method, path (under /api) and handler of every API route; other methods on these paths are 405. */
function apiRoutes(context: StudioContext): Array<['GET' | 'PUT' | 'POST' | 'DELETE', string, Handler]> {
  return [
    ['GET', '/machines', async (c) => c.json({ machines: await listMachines(context) })],
    ['POST', '/machines', async (c) => c.json(await createMachine(context, await readJson(c)), 201)],
    [
      'GET',
      '/machines/:id',
      async (c) => {
        const { id, file, text, version, problems } = await loadMachine(context, idParam(c));
        return c.json({ id, file, text, spec: parseLoose(text), version, problems });
      },
    ],
    [
      'PUT',
      '/machines/:id',
      async (c) => {
        const id = idParam(c);
        return c.json(await saveMachine(context, id, saveBody(await readJson(c))));
      },
    ],
    [
      'DELETE',
      '/machines/:id',
      async (c) => {
        const id = idParam(c);
        return c.json(await deleteMachine(context, id, await readJson(c)));
      },
    ],
    [
      'POST',
      '/machines/:id/generate',
      async (c) => {
        const id = idParam(c);
        const body = await readJson(c, { optional: true });
        return c.json(await generateMachine(context, id, body === undefined ? undefined : saveBody(body)));
      },
    ],
    [
      'POST',
      '/machines/:id/check',
      async (c) => {
        const id = idParam(c);
        return c.json(await checkMachine(context, id, await readJson(c)));
      },
    ],
    ['GET', '/machines/:id/cases', async (c) => c.json({ cases: await listCases(context, idParam(c)) })],
    [
      'PUT',
      '/machines/:id/cases/:name',
      async (c) => {
        const id = idParam(c);
        const name = caseNameFrom(c.req.param('name') ?? '');
        return c.json(await saveCase(context, id, name, saveCaseBody(await readJson(c))));
      },
    ],
    ['GET', '/tools', async (c) => c.json({ tools: await listTools(context) })],
    ['POST', '/tools', async (c) => c.json(await createTool(context, await readJson(c)), 201)],
  ];
}

/**
 * The studio API (`/api/*`): machines (list, load, create, save, delete, generate, live type check), their recorded cases (list, save)
 * and tools (palette, new stub).
 * Answers are JSON; failures are the `FlowError` shape `{ code, message, details? }` with the code's status (see errors.ts).
 * @example const api = createApiApp(context); await api.fetch(request, { incoming, outgoing })
 */
export function createApiApp(context: StudioContext) {
  const api = new Hono<StudioEnv>().basePath(API_PREFIX);
  api.onError((error) => errorResponse(error));
  api.use('*', async (c, next) => {
    const refused = rawApiPathRefusal(c.env.incoming.url ?? '');
    if (refused) throw refused;
    await next();
    c.header('Cache-Control', 'no-store');
    c.header('X-Content-Type-Options', 'nosniff');
  });
  api.use('*', limitBody);
  const routes = apiRoutes(context);
  for (const [method, path, handler] of routes) api.on(method, path, handler);
  for (const path of new Set(routes.map(([, path]) => path))) {
    api.all(path, (c) => {
      throw new StudioError('STUDIO_METHOD_NOT_ALLOWED', `${c.req.method} is not allowed on ${API_PREFIX}${path}`);
    });
  }
  api.all('*', (c) => {
    throw new StudioError('STUDIO_NOT_FOUND', `no API route ${c.req.method} ${c.req.path}`);
  });
  api.notFound((c) => errorResponse(new StudioError('STUDIO_NOT_FOUND', `no API route ${c.req.method} ${c.req.path}`)));
  return api;
}
