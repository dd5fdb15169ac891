import type { RuntimeMachine } from '@flowing/protocol';
import type { ServerScope } from '../context.ts';
import { answer, type RouteHandlers } from '../route.ts';

/**
 * `GET /machines`: the served machines, their declared events and, when the host process handed them in
 * (`flowing serve` reads each `<id>.flow.json`), their specs for the inspector's graph.
 */
export function machineRoutes(scope: ServerScope): Pick<RouteHandlers, 'GET /machines'> {
  return {
    'GET /machines': (c) => {
      const machines = [...scope.runtime.machines.values()].map(
        ({ definition, eventSchemas }): RuntimeMachine => ({
          id: definition.id,
          specHash: definition.specHash,
          events: [...eventSchemas.keys()],
          spec: scope.options.specs.get(definition.id) ?? null,
        }),
      );
      return answer(c, { machines });
    },
  };
}
