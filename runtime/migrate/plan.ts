import type { AnyStateNode } from 'xstate';
import { activeStatePaths } from '@flowing/protocol';
import type { MachineInfo } from '../session/machine-info.ts';
import type { JournalEntry, SessionRecord } from '../store/types.ts';
import { hookApplies, renamePath, type AnyMigrationHook } from './hook.ts';

/** Why a session recorded under another version cannot continue on the current one. */
export interface StaleReason {
  code: StaleReasonCode;
  message: string;
  /** The state path concerned (old path, as recorded), when there is one. */
  state?: string;
  /** The context field concerned, when there is one. */
  field?: string;
}

export type StaleReasonCode =
  | 'STALE_STATE_REMOVED'
  | 'STALE_STATE_CHANGED'
  | 'STALE_CONTEXT_INVALID'
  | 'STALE_CALL_IN_FLIGHT'
  | 'STALE_TIMER_CHANGED'
  | 'MIGRATION_HOOK_THREW';

/** What carrying one session onto the current version gives: the new state value and context, or why it cannot. */
export type ContinuationPlan =
  | {
      ok: true;
      fromVersion: string;
      toVersion: string;
      /** The state value and context the session continues with. */
      value: unknown;
      context: unknown;
      activeStates: string[];
      /** Old path to new path, for the paths the hook renamed. */
      renamed: Record<string, string>;
      /** True when a migration hook was applied. */
      hook: boolean;
    }
  | { ok: false; fromVersion: string; toVersion: string; activeStates: string[]; reasons: StaleReason[]; hook: boolean };

/**
 * Decides whether a session stored under another spec hash continues on the machine `info` runs now: its active
 * states (after the hook's renames, when a hook applies) exist there as the same kind of state, its context (after
 * the hook's `context`) validates against the current schema, its pending `after` timers are still declared, and no
 * call is in flight in an invoke that changed (another tool or model call kind, or no invoke any more). Pure: it
 * reads the record and the journal entries of its calls in flight and writes nothing.
 */
export function planContinuation(
  record: SessionRecord,
  info: MachineInfo,
  journal: readonly JournalEntry[],
  hook?: AnyMigrationHook,
): ContinuationPlan {
  const fromVersion = record.specHash;
  const toVersion = info.definition.specHash;
  const snapshot = (record.snapshot ?? {}) as { value?: unknown; context?: unknown };
  const oldPaths = activeStatePaths(snapshot.value);
  const applied = hook !== undefined && hookApplies(hook, fromVersion) ? hook : undefined;
  const stale = (reasons: StaleReason[]): ContinuationPlan => ({
    ok: false,
    fromVersion,
    toVersion,
    activeStates: oldPaths,
    reasons,
    hook: applied !== undefined,
  });

  const reasons: StaleReason[] = [];
  const renamed: Record<string, string> = {};
  const newPaths = oldPaths.map((path) => {
    const next = renamePath(path, applied?.states);
    if (next !== path) renamed[path] = next;
    return next;
  });
  oldPaths.forEach((path, i) => {
    const reason = stateReason(info, path, newPaths[i]!);
    if (reason) reasons.push(reason);
  });

  let context = snapshot.context;
  if (applied?.context) {
    try {
      context = applied.context(structuredClone(context) as never);
    } catch (error) {
      const thrown = error instanceof Error ? error.message : String(error);
      return stale([...reasons, { code: 'MIGRATION_HOOK_THREW', message: `the migration hook's context() threw: ${thrown}` }]);
    }
  }
  context = fitContext(info, context);
  reasons.push(...contextReasons(info, context));
  reasons.push(...callReasons(record, info, journal, renamed));
  reasons.push(...timerReasons(record, info));
  if (reasons.length > 0) return stale(reasons);
  return {
    ok: true,
    fromVersion,
    toVersion,
    value: stateValueOf(newPaths),
    context,
    activeStates: newPaths,
    renamed,
    hook: applied !== undefined,
  };
}

function stateReason(info: MachineInfo, oldPath: string, newPath: string): StaleReason | undefined {
  const node = nodeAt(info.machine.root, newPath);
  const where = oldPath === newPath ? `state '${oldPath}'` : `state '${oldPath}' (renamed '${newPath}' by the migration hook)`;
  if (!node) {
    return {
      code: 'STALE_STATE_REMOVED',
      message: `${where} is not in the current version of '${info.definition.id}'`,
      state: oldPath,
    };
  }
  if (Object.keys(node.states).length > 0) {
    return {
      code: 'STALE_STATE_CHANGED',
      message: `${where} has child states in the current version of '${info.definition.id}'; the session does not know which to enter`,
      state: oldPath,
    };
  }
  return undefined;
}

function nodeAt(root: AnyStateNode, path: string): AnyStateNode | undefined {
  let node: AnyStateNode | undefined = root;
  for (const key of path.split('.')) {
    node = node && Object.hasOwn(node.states, key) ? node.states[key] : undefined;
    if (!node) return undefined;
  }
  return node;
}

/**
 * The context with what the new version declares by default filled in (a field added with a default) and the fields
 * it no longer declares left out (nothing reads them any more; the log keeps the context they were in).
 */
function fitContext(info: MachineInfo, context: unknown): unknown {
  if (context === null || typeof context !== 'object' || Array.isArray(context)) return context;
  const fields = info.definition.contextFields;
  const defaults = initialContext(info);
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(context)) if (Object.hasOwn(fields, name)) out[name] = value;
  for (const name of Object.keys(fields)) {
    if (!Object.hasOwn(out, name) && defaults[name] !== undefined) out[name] = structuredClone(defaults[name]);
  }
  return out;
}

/**
 * A new session's context without input: the declared defaults. Generated code keeps them in the machine's context
 * factory (its contract lists types only), so they are read from there.
 */
function initialContext(info: MachineInfo): Record<string, unknown> {
  const context = (info.definition.machine.config as { context?: unknown }).context;
  try {
    const value = typeof context === 'function' ? (context as (args: { input: object }) => unknown)({ input: {} }) : context;
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    // A hand-written factory that needs more than its input: no defaults to fill in.
    return {};
  }
}

function contextReasons(info: MachineInfo, context: unknown): StaleReason[] {
  const check = info.contextSchema.safeParse(context);
  if (check.success) return [];
  const given = (context ?? {}) as Record<string, unknown>;
  return check.error.issues.map((issue) => {
    const field = issue.path.map(String).join('.');
    const top = String(issue.path[0] ?? '');
    const message =
      top === ''
        ? `the context does not match the current context schema: ${issue.message}`
        : Object.hasOwn(given, top)
          ? `context field '${field}' changed type in the current version: ${issue.message}`
          : `context field '${field}' is required in the current version and the session has none (give it a default, or map it in a migration hook)`;
    return { code: 'STALE_CONTEXT_INVALID' as const, message, ...(top === '' ? {} : { field }) };
  });
}

function callReasons(
  record: SessionRecord,
  info: MachineInfo,
  journal: readonly JournalEntry[],
  renamed: Record<string, string>,
): StaleReason[] {
  const reasons: StaleReason[] = [];
  const entries = new Map(journal.map((entry) => [entry.key, entry]));
  for (const [invokeId, key] of Object.entries(record.calls ?? {})) {
    const entry = entries.get(key);
    if (entry?.completed) continue;
    const invoke = info.definition.invokes[invokeId];
    const now = invoke === undefined ? undefined : 'tool' in invoke ? invoke.tool : 'machine' in invoke ? invoke.machine : invoke.llm;
    const same = invoke !== undefined && entry !== undefined && now === entry.name && !Object.values(renamed).includes(invokeId);
    if (same) continue;
    reasons.push({
      code: 'STALE_CALL_IN_FLIGHT',
      message: `call '${key}' (${entry?.name ?? 'unknown'}) is in flight in state '${invokeId}', whose invoke changed in the current version (${now === undefined ? 'no invoke there now' : `it calls '${now}' now`})`,
      state: invokeId,
    });
  }
  return reasons;
}

function timerReasons(record: SessionRecord, info: MachineInfo): StaleReason[] {
  if (!record.timers) return [];
  const declared = new Set<string>();
  const visit = (node: AnyStateNode) => {
    for (const transition of node.after) declared.add(transition.eventType);
    Object.values(node.states).forEach(visit);
  };
  visit(info.machine.root);
  return Object.keys(record.timers)
    .filter((type) => !declared.has(type))
    .map((type) => ({
      code: 'STALE_TIMER_CHANGED' as const,
      message: `the pending timer '${type}' is not declared in the current version (its delay or its state changed)`,
    }));
}

/** An XState state value from the dotted paths of its active leaves (the inverse of `activeStatePaths`). */
export function stateValueOf(paths: readonly string[]): unknown {
  return nestedValue(paths.map((path) => path.split('.')));
}

function nestedValue(paths: readonly string[][]): unknown {
  if (paths.length === 1 && paths[0]!.length === 1) return paths[0]![0];
  const groups = new Map<string, string[][]>();
  for (const [head, ...rest] of paths) {
    const group = groups.get(head!) ?? [];
    if (rest.length > 0) group.push(rest);
    groups.set(head!, group);
  }
  const out: Record<string, unknown> = {};
  for (const [key, rests] of groups) out[key] = rests.length === 0 ? {} : nestedValue(rests);
  return out;
}
