import type { EmitSpec, FieldMap, FlowSpec } from './schema.ts';
import { listStates, transitionSites } from './walk.ts';

/** A channel name: dot-separated snake_case words (`billing.need_order`). */
export const CHANNEL_PATTERN = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*$/;
/** What a machine listens to: a channel name, or a prefix ending in `.*` (`billing.*`). */
export const LISTEN_PATTERN = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*(?:\.\*)?$/;

/** The event a channel's messages arrive as: `billing.need_order` -> `BILLING_NEED_ORDER`. */
export function channelEventType(channel: string): string {
  return channel.toUpperCase().replace(/\./g, '_');
}

/** True when `pattern` (a name or a `prefix.*`) takes messages of `channel`. */
export function listensTo(pattern: string, channel: string): boolean {
  return pattern.endsWith('.*') ? channel.startsWith(pattern.slice(0, -1)) : channel === pattern;
}

/** True when some channel would match both patterns. */
export function patternsOverlap(a: string, b: string): boolean {
  const prefixA = a.endsWith('.*') ? a.slice(0, -1) : undefined;
  const prefixB = b.endsWith('.*') ? b.slice(0, -1) : undefined;
  if (prefixA === undefined && prefixB === undefined) return a === b;
  if (prefixA !== undefined && prefixB !== undefined) return prefixA.startsWith(prefixB) || prefixB.startsWith(prefixA);
  return prefixA !== undefined ? listensTo(a, b) : listensTo(b, a);
}

/** One line of the routing table: messages on channels matching `pattern` go to sessions of `machine`. */
export interface ChannelRoute {
  pattern: string;
  machine: string;
  /** The receiving machine's context field that holds a session's key. */
  key: string;
}

/** The routing table of a set of machines, sorted by pattern. */
export function channelRoutes(specs: ReadonlyArray<Pick<FlowSpec, 'id' | 'channels'>>): ChannelRoute[] {
  const routes: ChannelRoute[] = [];
  for (const spec of specs) {
    for (const pattern of spec.channels?.listen ?? []) routes.push({ pattern, machine: spec.id, key: spec.channels!.key });
  }
  return routes.sort((a, b) => (a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : a.machine < b.machine ? -1 : 1));
}

/**
 * Pairs of routes of different machines that some channel would match both of. Routing is never a guess: such a
 * table is refused (no longest-prefix rule decides between machines).
 */
export function overlappingRoutes(routes: readonly ChannelRoute[]): Array<[ChannelRoute, ChannelRoute]> {
  const pairs: Array<[ChannelRoute, ChannelRoute]> = [];
  for (let i = 0; i < routes.length; i++) {
    for (let j = i + 1; j < routes.length; j++) {
      const a = routes[i]!;
      const b = routes[j]!;
      if (a.machine !== b.machine && patternsOverlap(a.pattern, b.pattern)) pairs.push([a, b]);
    }
  }
  return pairs;
}

/** The route of `channel`, when exactly one machine listens to it. */
export function routeOf(routes: readonly ChannelRoute[], channel: string): ChannelRoute | undefined {
  const matches = routes.filter((route) => listensTo(route.pattern, channel));
  const machines = new Set(matches.map((route) => route.machine));
  return machines.size === 1 ? matches[0] : undefined;
}

/** An `emit` of a spec with the pointer segments of where it is written. */
export interface EmitSite {
  emit: EmitSpec;
  at: Array<string | number>;
}

/** Every `emit` of a spec: on transitions and in entry/exit blocks. */
export function emitSites(spec: Pick<FlowSpec, 'states'>): EmitSite[] {
  const sites: EmitSite[] = [];
  for (const { spec: state, pointer: base } of listStates(spec)) {
    for (const key of ['entry', 'exit'] as const) {
      state[key]?.emit?.forEach((emit, i) => sites.push({ emit, at: [...base, key, 'emit', i] }));
    }
    for (const site of transitionSites(state)) {
      for (const { transition, pointer } of site.transitions) {
        transition.emit?.forEach((emit, i) => sites.push({ emit, at: [...base, ...pointer, 'emit', i] }));
      }
    }
  }
  return sites;
}

/** A problem the project-wide channel check finds, in one machine's spec. */
export interface ChannelProblem {
  machine: string;
  code: 'SPEC_CHANNEL_OVERLAP' | 'SPEC_CHANNEL_UNROUTED' | 'SPEC_CHANNEL_UNKNOWN_MESSAGE' | 'SPEC_CHANNEL_PAYLOAD';
  path: Array<string | number>;
  message: string;
}

/**
 * The checks that need every machine of a project: overlapping routes, messages nobody receives, messages the
 * receiver does not declare, and payload fields the receiver's event does not have or needs.
 */
export function checkChannelProject(specs: ReadonlyArray<Pick<FlowSpec, 'id' | 'channels' | 'states' | 'events'>>): ChannelProblem[] {
  const problems: ChannelProblem[] = [];
  const routes = channelRoutes(specs);
  for (const [a, b] of overlappingRoutes(routes)) {
    for (const [route, other] of [
      [a, b],
      [b, a],
    ] as const) {
      const index = specs.find((s) => s.id === route.machine)!.channels!.listen.indexOf(route.pattern);
      problems.push({
        machine: route.machine,
        code: 'SPEC_CHANNEL_OVERLAP',
        path: ['channels', 'listen', index],
        message: `'${route.pattern}' overlaps '${other.pattern}' of machine '${other.machine}': a message on a channel both match would have two receivers; make the prefixes disjoint`,
      });
    }
  }
  const byId = new Map(specs.map((spec) => [spec.id, spec]));
  for (const spec of specs) {
    for (const { emit, at } of emitSites(spec)) {
      const route = routeOf(routes, emit.channel);
      if (!route) {
        if (!routes.some((r) => listensTo(r.pattern, emit.channel)))
          problems.push({
            machine: spec.id,
            code: 'SPEC_CHANNEL_UNROUTED',
            path: [...at, 'channel'],
            message: `no machine listens to channel '${emit.channel}' (add it, or a prefix of it, to a machine's "channels.listen")`,
          });
        continue;
      }
      const event = channelEventType(emit.channel);
      const fields: FieldMap | undefined = byId.get(route.machine)!.events[event];
      if (!fields) {
        problems.push({
          machine: spec.id,
          code: 'SPEC_CHANNEL_UNKNOWN_MESSAGE',
          path: [...at, 'channel'],
          message: `machine '${route.machine}' receives '${emit.channel}' as event '${event}', which it does not declare in "events"`,
        });
        continue;
      }
      const data = emit.data ?? {};
      for (const field of Object.keys(data)) {
        if (!Object.hasOwn(fields, field))
          problems.push({
            machine: spec.id,
            code: 'SPEC_CHANNEL_PAYLOAD',
            path: [...at, 'data', field],
            message: `event '${event}' of machine '${route.machine}' has no field '${field}' (it has: ${Object.keys(fields).join(', ') || 'none'})`,
          });
      }
      for (const [field, type] of Object.entries(fields)) {
        if (!type.optional && !Object.hasOwn(data, field))
          problems.push({
            machine: spec.id,
            code: 'SPEC_CHANNEL_PAYLOAD',
            path: [...at, 'data'],
            message: `event '${event}' of machine '${route.machine}' needs field '${field}'; map it in "data"`,
          });
      }
    }
  }
  return problems;
}
