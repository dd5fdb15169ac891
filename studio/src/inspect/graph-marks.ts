import type { RuntimeEvent, SessionAt } from '@flowing/protocol';
import type { SpecGraph, TransitionKind } from '../graph/index.ts';

/** One transition XState took, as `state.changed` records it: the event and XState state node ids. */
interface TakenTransition {
  event: string;
  source: string;
  targets: string[];
}

/** What the Inspect graph marks at one event: node ids (spec pointers) and edge ids of the graph. */
export interface GraphMarks {
  /** Active states: leaves and the compound/parallel states around them. */
  active: Set<string>;
  /** The active leaf states (the ones drawn strongest). */
  activeLeaves: Set<string>;
  /** Edges of the transition(s) taken by the viewed event (animated). */
  taken: Set<string>;
  /** States visited up to the viewed event, with how often each was entered. */
  visits: Map<string, number>;
  /** Edges taken up to the viewed event, with how often each was taken. */
  edgeCounts: Map<string, number>;
  /** The state that refused the viewed event (or the latest refusal while live), with the event named. */
  refusal: { nodeIds: string[]; event: string; code: string; reason: string; seq: number } | null;
}

/** Node ids by dotted state path (`active.idle`): the paths the runtime reports. */
export function nodesByPath(graph: SpecGraph): Map<string, string> {
  return new Map(graph.nodes.map((node) => [node.data.layoutKey, node.id]));
}

/** The dotted path of an XState state node id (`order-support.active.idle` -> `active.idle`). */
function pathOfStateNodeId(id: string, machineId: string): string {
  return id.startsWith(`${machineId}.`) ? id.slice(machineId.length + 1) : id;
}

/** Which kind of spec transition an XState event type is, with its key (event name or delay). */
function kindOfEvent(eventType: string): { kind: TransitionKind; key?: string } {
  if (eventType === '') return { kind: 'always' };
  if (eventType.startsWith('xstate.done.actor.')) return { kind: 'onDone' };
  if (eventType.startsWith('xstate.error.actor.')) return { kind: 'onError' };
  if (eventType.startsWith('xstate.done.state.')) return { kind: 'done' };
  if (eventType.startsWith('xstate.after.')) return { kind: 'after', key: eventType.slice('xstate.after.'.length).split('.')[0] };
  return { kind: 'on', key: eventType };
}

/** Edge ids of the spec transitions behind the transitions XState reported. */
export function takenEdges(
  graph: SpecGraph,
  machineId: string,
  transitions: readonly TakenTransition[],
  byPath = nodesByPath(graph),
): string[] {
  const ids: string[] = [];
  for (const t of transitions) {
    const source = byPath.get(pathOfStateNodeId(t.source, machineId));
    if (source === undefined) continue;
    const targets = new Set(
      t.targets.map((id) => byPath.get(pathOfStateNodeId(id, machineId))).filter((id): id is string => id !== undefined),
    );
    const { kind, key } = kindOfEvent(t.event);
    const candidates = graph.edges.filter((e) => e.source === source && e.data.kind === kind && (key === undefined || e.data.key === key));
    // Among guarded branches, the one whose target was entered (a targetless one when nothing was entered).
    const hit = candidates.filter((e) => (targets.size === 0 ? e.data.internal : targets.has(e.target)));
    ids.push(...(hit.length > 0 ? hit : candidates.length === 1 ? candidates : []).map((e) => e.id));
  }
  return ids;
}

/** The active states and their ancestors (node ids) for dotted leaf paths. */
function withAncestors(paths: readonly string[], byPath: Map<string, string>): { all: Set<string>; leaves: Set<string> } {
  const all = new Set<string>();
  const leaves = new Set<string>();
  for (const path of paths) {
    const leaf = byPath.get(path);
    if (leaf !== undefined) leaves.add(leaf);
    const parts = path.split('.');
    for (let i = 1; i <= parts.length; i++) {
      const id = byPath.get(parts.slice(0, i).join('.'));
      if (id !== undefined) all.add(id);
    }
  }
  return { all, leaves };
}

/**
 * The marks for the graph after `events[index]`: active states from the folded view, the transition that event took,
 * the path so far (visit and edge counts) and the refusal to show at the state that refused.
 */
export function graphMarks(
  graph: SpecGraph,
  machineId: string,
  events: readonly RuntimeEvent[],
  index: number,
  view: SessionAt,
): GraphMarks {
  const byPath = nodesByPath(graph);
  const { all, leaves } = withAncestors(view.activeStates, byPath);
  const visits = new Map<string, number>();
  const edgeCounts = new Map<string, number>();
  let taken: string[] = [];
  const last = Math.min(index, events.length - 1);
  for (let i = 0; i <= last; i++) {
    const event = events[i]!;
    if (event.type !== 'state.changed') continue;
    const transitions = (event.data.transitions as TakenTransition[] | undefined) ?? [];
    const edges = takenEdges(graph, machineId, transitions, byPath);
    for (const id of edges) edgeCounts.set(id, (edgeCounts.get(id) ?? 0) + 1);
    for (const t of transitions) {
      for (const target of t.targets) {
        const id = byPath.get(pathOfStateNodeId(target, machineId));
        if (id !== undefined) visits.set(id, (visits.get(id) ?? 0) + 1);
      }
    }
    if (i === last) taken = edges;
  }
  // A refusal stays shown until the session moves on (the next state change after it).
  const rejection = view.lastRejection;
  const refusal =
    rejection && rejection.seq > (lastStateChangeSeq(events, last) ?? 0)
      ? {
          nodeIds: rejection.states.map((p) => byPath.get(p)).filter((id): id is string => id !== undefined),
          event: rejection.event ?? '(no type)',
          code: rejection.code,
          reason: rejection.reason,
          seq: rejection.seq,
        }
      : null;
  return { active: all, activeLeaves: leaves, taken: new Set(taken), visits, edgeCounts, refusal };
}

function lastStateChangeSeq(events: readonly RuntimeEvent[], last: number): number | undefined {
  for (let i = last; i >= 0; i--) if (events[i]!.type === 'state.changed') return events[i]!.seq;
  return undefined;
}
