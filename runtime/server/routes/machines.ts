import type { Hono } from 'hono';
import type { ServerScope } from '../context.ts';

/**
 * `GET /machines`: the served machines, their declared events and, when the host process handed them in
 * (`flowing serve` reads each `<id>.flow.json`), their specs for the inspector's graph.
 */
export function machineRoutes(app: Hono, scope: ServerScope) {
  app.get('/machines', (c) => {
    const machines = [...scope.runtime.machines.values()].map(({ definition, eventSchemas }) => ({
      id: definition.id,
      specHash: definition.specHash,
      events: [...eventSchemas.keys()],
      spec: scope.options.specs.get(definition.id) ?? null,
    }));
    return c.json({ machines });
  });
}
