import type { RuntimeMachine } from '@flowing/protocol';
import { FlowingError } from '../../errors.ts';
import type { ServerScope } from '../context.ts';
import { answer, type RouteHandlers } from '../route.ts';

/**
 * `GET /machines`: the served machines, their declared events and, when the host process handed them in
 * (`flowing serve` reads each `<id>.flow.json`), their specs for the inspector's graph.
 */
export function machineRoutes(scope: ServerScope): Pick<RouteHandlers, 'GET /machines' | 'GET /machines/:id/states'> {
  return {
    'GET /machines/:id/states': async (c) => {
      const machineId = c.req.param('id');
      const info = scope.runtime.machines.get(machineId);
      if (!info) {
        throw new FlowingError(
          'UNKNOWN_MACHINE',
          `no machine ${JSON.stringify(machineId.slice(0, 200))} is served (served: ${[...scope.runtime.machines.keys()].join(', ')})`,
        );
      }
      const states = await scope.runtime.sessionsByState(machineId);
      return answer(c, { machineId, specHash: info.definition.specHash, states });
    },
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
