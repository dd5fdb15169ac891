import { pointer, type StateEntry, type TransitionObject, type TransitionSpec } from '@flowing/spec';
import { pascalCase } from '../names.ts';
import { array, mapped, object, type Doc, type Member } from './doc.ts';
import type { ExpressionSite } from './expressions.ts';
import type { ImplementationTable, Place } from './implementations.ts';
import { stringDoc } from './literal.ts';

/** What writing states and transitions needs: the machine id, its states by name, its models, the named table. */
export interface TransitionScope {
  machineId: string;
  byName: ReadonlyMap<string, StateEntry>;
  /** The spec's `models`: a model per call kind, or `default`. */
  models: Readonly<Record<string, string>> | undefined;
  table: ImplementationTable;
  /** Each state's index in spec order. */
  order: ReadonlyMap<StateEntry, number>;
  /** The arguments function of each tool invoke, by state: written once, used by the invoke and the contract. */
  toolArgs: Member[];
  /** The name of the machine's context type. */
  contextType: string;
  /** The name of the machine's output type. */
  outputType: string;
  /** The name of the machine's tool registry (`<machine>Tools`). */
  registry: string;
}

/** A transition list's place in its state: `on EVENT`, `after`, `always`, the invoke's `onDone`/`onError`, ... */
export interface TransitionSiteInfo {
  from: StateEntry;
  site: ExpressionSite;
  /** The base of the names its guards and actions get, e.g. `fetchOrderDone` (a target adds `ToTraceShipment`). */
  name: string;
  event?: string;
  actor?: string;
  at: Array<string | number>;
  /** An agent call's history field: each transition first appends the call's new messages (`output.messages`) to it. */
  history?: string;
}

/**
 * A target as XState resolves it from the state `from`: a sibling by name (`"idle"`), a descendant of a sibling by
 * path (`"logs.ready"`), a descendant of `from` with a leading dot (`".child"`), anything else by `#id.path`.
 */
export function targetSource(scope: TransitionScope, from: StateEntry, target: string): string {
  const entry = scope.byName.get(target);
  if (!entry) return JSON.stringify(`#${scope.machineId}.${target}`);
  const base = from.parent?.path ?? [];
  if (startsWith(entry.path, from.path)) {
    if (entry.path.length > from.path.length) return JSON.stringify(`.${entry.path.slice(from.path.length).join('.')}`);
  }
  if (startsWith(entry.path, base)) return JSON.stringify(entry.path.slice(base.length).join('.'));
  return JSON.stringify(`#${scope.machineId}.${entry.path.join('.')}`);
}

function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
  return path.length >= prefix.length && prefix.every((segment, i) => path[i] === segment);
}

/** A transition value (a target, one transition or a guarded list) as an XState transition config. */
export function transitionDoc(scope: TransitionScope, info: TransitionSiteInfo, value: TransitionSpec): Doc {
  if (typeof value === 'string') {
    if (info.history !== undefined) return transitionObjectDoc(scope, info, { target: value }, info.at);
    return mapped(pointer(...info.at), targetSource(scope, info.from, value));
  }
  if (!Array.isArray(value)) return transitionObjectDoc(scope, info, value, info.at);
  return array(value.map((t, i) => transitionObjectDoc(scope, info, t, [...info.at, i])));
}

/** A transition's place: its state, site and target, never its position in a list (see ImplementationTable). */
function transitionPlace(scope: TransitionScope, info: TransitionSiteInfo, t: TransitionObject): Place {
  const name = t.target === undefined ? info.name : `${info.name}To${pascalCase(t.target)}`;
  return { name, order: scope.order.get(info.from)!, site: info.site, event: info.event, actor: info.actor };
}

function transitionObjectDoc(scope: TransitionScope, info: TransitionSiteInfo, t: TransitionObject, at: Array<string | number>): Doc {
  const place = transitionPlace(scope, info, t);
  const target = t.target === undefined ? undefined : targetSource(scope, info.from, t.target);
  const actions = actionList(scope.table, place, t, at, info.history);
  const hasGuard = t.guard !== undefined;
  if (target !== undefined && !hasGuard && actions === undefined && t.description === undefined) {
    return mapped(pointer(...at), mapped(pointer(...at, 'target'), target));
  }
  const members: Member[] = [];
  if (target !== undefined) members.push({ key: 'target', value: target, pointer: pointer(...at, 'target') });
  if (typeof t.guard === 'string') {
    members.push({ key: 'guard', value: scope.table.guard(place, t.guard, pointer(...at, 'guard')), pointer: pointer(...at, 'guard') });
  } else if (t.guard) {
    members.push({ key: 'guard', value: JSON.stringify(t.guard.ref), pointer: pointer(...at, 'guard', 'ref') });
  }
  if (actions !== undefined) members.push({ key: 'actions', value: actions });
  if (t.description !== undefined) members.push({ key: 'description', value: stringDoc(t.description) });
  return mapped(pointer(...at), object(members));
}

/**
 * The actions of a transition or an entry/exit block: its assignments as one named `assign`, then its named actions;
 * a single action is written bare, several as a list. Undefined when there is none.
 */
export function actionList(
  table: ImplementationTable,
  place: Place,
  block: Pick<TransitionObject, 'assign' | 'actions' | 'emit'>,
  at: Array<string | number>,
  history?: string,
): Doc | undefined {
  const list: Doc[] = [];
  // Before the spec's own assign, so that one sees the conversation with this call's messages in it.
  if (history !== undefined) list.push(table.appendMessages(place, history, pointer(...at)));
  if (block.assign && Object.keys(block.assign).length > 0) {
    list.push(table.assign(place, block.assign, (field) => pointer(...at, 'assign', field)));
  }
  (block.actions ?? []).forEach((name, i) => list.push(mapped(pointer(...at, 'actions', i), JSON.stringify(name))));
  (block.emit ?? []).forEach((message, i) =>
    list.push(table.emit(place, message, (part) => pointer(...at, 'emit', i, ...part.split('/')))),
  );
  if (list.length === 0) return undefined;
  return list.length === 1 ? list[0] : array(list);
}
