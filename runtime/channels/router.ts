import { createHash } from 'node:crypto';
import { channelEventType, overlappingRoutes, routeOf, type ChannelRoute } from '@flowing/spec';
import type { AnyMachineDefinition } from '../definition.ts';
import { FlowingError } from '../errors.ts';

/** Where a message on a channel goes: a machine, the context field its key fills, and the receiving session. */
export interface ChannelTarget {
  machine: string;
  keyField: string;
  sessionId: string;
  /** The event the message arrives as (`billing.need_order` -> `BILLING_NEED_ORDER`). */
  event: string;
}

/**
 * The routing table of the machines given to a runtime. Built once; two machines listening to patterns a channel
 * could match both of are refused here, as the validator refuses them, so a message never has two receivers.
 */
export class ChannelRouter {
  readonly routes: ChannelRoute[];

  constructor(machines: Iterable<AnyMachineDefinition>) {
    const routes: ChannelRoute[] = [];
    for (const machine of machines) {
      for (const pattern of machine.channels?.listen ?? []) routes.push({ pattern, machine: machine.id, key: machine.channels!.key });
    }
    const [overlap] = overlappingRoutes(routes);
    if (overlap) {
      const [a, b] = overlap;
      throw new FlowingError(
        'MACHINE_INVALID',
        `machines '${a.machine}' ('${a.pattern}') and '${b.machine}' ('${b.pattern}') listen to overlapping channels; make the prefixes disjoint`,
      );
    }
    this.routes = routes;
  }

  /** The receiver of a message on `channel` with `key`, or undefined when no machine listens to the channel. */
  target(channel: string, key: string): ChannelTarget | undefined {
    const route = routeOf(this.routes, channel);
    if (!route) return undefined;
    return {
      machine: route.machine,
      keyField: route.key,
      sessionId: receiverSessionId(route.machine, key),
      event: channelEventType(channel),
    };
  }
}

/**
 * The id of the session of `machine` that owns `key`: the same in every process, so a message creates the session
 * for a new key and reaches the existing one for a known key without a lookup table. A key that is not id-safe is
 * hashed.
 */
export function receiverSessionId(machine: string, key: string): string {
  const safe = /^[A-Za-z0-9_-]{1,64}$/.test(key) ? key : `h${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
  return `${machine}--${safe}`;
}
