import { FlowingError, formatIssues } from '../errors.ts';
import type { RuntimeEvent } from '../events.ts';
import type { MachineInfo } from '../session/machine-info.ts';
import type { SessionStore } from '../store/types.ts';
import { readSessionLog } from './read-log.ts';
import { sessionAt } from '@flowing/protocol';
import { resolveNodes } from '../xstate-adapter.ts';

/** Where a fork starts: the parent's state at `forkedAt`, the (patched) context, and the snapshot to start the actor from. */
export interface ForkPlan {
  info: MachineInfo;
  parentId: string;
  forkedAt: number;
  state: unknown;
  context: Record<string, unknown>;
  /** A persisted XState snapshot: the state value, the context, and the calls the state invokes (started on restore). */
  snapshot: Record<string, unknown>;
  /** The state's `after` timers (delayed event type and delay): they start with the full delay when the fork starts. */
  timers: Array<{ type: string; delayMs: number }>;
}

/**
 * Works out a fork of `parentId` at event `atSeq` from the parent's stored log, without running anything: the state
 * and context right after that event (`sessionAt`), the context patch applied and checked against the machine's
 * context schema, and the calls the state invokes (they start when the fork starts: the fork makes them itself, with
 * its own context; the parent's journal is never replayed into it) and its `after` timers start with their full
 * delay. Refused with a code when it cannot be done honestly: no state yet (FORK_NO_STATE), the session had ended
 * (FORK_ENDED), a call was in flight (FORK_MID_CALL; its result belongs to the parent), a named delay
 * (FORK_TIMED_STATE), the spec changed (SPEC_CHANGED), a bad patch (FORK_CONTEXT_INVALID naming the field).
 */
export async function planFork(
  store: SessionStore,
  machineOf: (machineId: string) => MachineInfo,
  parentId: string,
  atSeq: number,
  patch?: Record<string, unknown>,
): Promise<ForkPlan> {
  const { record, events } = await readSessionLog(store, parentId);
  const info = machineOf(record.machineId);
  if (record.specHash !== info.definition.specHash) {
    throw new FlowingError(
      'SPEC_CHANGED',
      `session '${parentId}' was recorded with another version of '${record.machineId}' (spec hash ${record.specHash.slice(0, 12)}, now ${info.definition.specHash.slice(0, 12)}); it is not forked onto the new graph`,
    );
  }
  const lastSeq = events.length === 0 ? 0 : events[events.length - 1]!.seq;
  if (!Number.isInteger(atSeq) || atSeq < 1 || atSeq > lastSeq) {
    throw new FlowingError('INSPECT_SEQ_OUT_OF_RANGE', `session '${parentId}' has events 1 to ${lastSeq}; cannot fork at ${atSeq}`, {
      details: { seq: atSeq, lastSeq },
    });
  }
  const at = sessionAt(events, atSeq);
  if (at.state === null)
    throw new FlowingError(
      'FORK_NO_STATE',
      `session '${parentId}' has no state yet at event ${atSeq}; fork at or after its first state.changed`,
      { details: { seq: atSeq } },
    );
  if (at.status === 'done' || at.status === 'error' || at.status === 'cancelled') {
    throw new FlowingError('FORK_ENDED', `session '${parentId}' had ended (${at.status}) at event ${atSeq}; fork at an earlier event`, {
      details: { seq: atSeq, status: at.status },
    });
  }
  if (at.pendingCalls.length > 0) {
    const calls = at.pendingCalls.map((c) => ({ callId: c.callId, kind: c.kind, name: c.name }));
    const entered = lastStateChange(events, atSeq);
    const settled = events.find((e) => e.seq > atSeq && e.type === 'state.changed')?.seq ?? null;
    throw new FlowingError(
      'FORK_MID_CALL',
      `at event ${atSeq} of session '${parentId}' ${calls.map((c) => `'${c.name}' (${c.callId})`).join(', ')} was in flight; fork at event ${entered} (the fork makes the call itself)${settled === null ? '' : ` or at event ${settled} (after its result)`}`,
      { details: { seq: atSeq, calls, before: entered, after: settled } },
    );
  }
  const nodes = resolveNodes(info.machine, at.state, {});
  const timers: ForkPlan['timers'] = [];
  for (const node of nodes) {
    for (const transition of node.after) {
      // A named or computed delay would need the machine's implementations and the entering event: refused.
      if (typeof transition.delay !== 'number') {
        throw new FlowingError(
          'FORK_TIMED_STATE',
          `state '${node.key}' waits on a named delay (${String(transition.delay).slice(0, 60)}), which a fork cannot start again; fork at another event`,
          { details: { seq: atSeq, state: node.key } },
        );
      }
      timers.push({ type: transition.eventType, delayMs: transition.delay });
    }
  }
  const context = patchContext(info, at.context, patch);
  return {
    info,
    parentId,
    forkedAt: atSeq,
    state: at.state,
    context,
    timers,
    snapshot: forkSnapshot(info, at.state, context, enteringEvent(events, atSeq)),
  };
}

function lastStateChange(events: readonly RuntimeEvent[], atSeq: number): number {
  for (let i = Math.min(atSeq, events.length) - 1; i >= 0; i--) if (events[i]!.type === 'state.changed') return events[i]!.seq;
  return atSeq;
}

/**
 * The context with the patch applied: each key replaces a declared top-level field (`null` removes an optional one).
 * Unknown fields and values the schema refuses are FORK_CONTEXT_INVALID with `details.issues[].path`.
 */
function patchContext(info: MachineInfo, base: unknown, patch: Record<string, unknown> | undefined): Record<string, unknown> {
  const context: Record<string, unknown> = { ...(base !== null && typeof base === 'object' ? (base as Record<string, unknown>) : {}) };
  const issues: Array<{ path: string[]; message: string }> = [];
  for (const key of Object.keys(patch ?? {})) {
    if (!Object.hasOwn(info.definition.contextFields, key)) {
      issues.push({
        path: [key],
        message: `'${key.slice(0, 100)}' is not a context field of '${info.definition.id}' (fields: ${Object.keys(info.definition.contextFields).join(', ')})`,
      });
      continue;
    }
    const value = patch![key];
    if (value === null) delete context[key];
    else context[key] = value;
  }
  if (issues.length === 0) {
    const check = info.contextSchema.safeParse(context);
    if (!check.success) issues.push(...check.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })));
  }
  if (issues.length > 0) {
    throw new FlowingError(
      'FORK_CONTEXT_INVALID',
      `the fork's context does not match the context of '${info.definition.id}': ${formatIssues(issues.map((i) => ({ path: i.path, message: i.message })))}`,
      { details: { issues } },
    );
  }
  return context;
}

/**
 * The event that entered the state at `atSeq`, as the state's invoke input mappings would have seen it: the event from
 * outside (logged whole), or a call's result rebuilt from the log.
 */
function enteringEvent(events: readonly RuntimeEvent[], atSeq: number): { type: string } & Record<string, unknown> {
  const seq = lastStateChange(events, atSeq);
  const change = events[seq - 1]!;
  const data = change.data as { event?: string; payload?: { type: string } & Record<string, unknown> };
  if (data.payload) return data.payload;
  const type = typeof data.event === 'string' ? data.event : 'xstate.init';
  for (const [prefix, kinds] of [
    ['xstate.done.actor.', ['tool.completed', 'llm.completed']],
    ['xstate.error.actor.', ['tool.failed', 'llm.failed']],
  ] as const) {
    if (!type.startsWith(prefix)) continue;
    const invokeId = type.slice(prefix.length);
    for (let i = seq - 2; i >= 0; i--) {
      const event = events[i]!;
      const callId = (event.data as { callId?: unknown }).callId;
      if ((kinds as readonly string[]).includes(event.type) && typeof callId === 'string' && callId.startsWith(`${invokeId}@`)) {
        const d = event.data as { output?: unknown; error?: unknown };
        return prefix === 'xstate.done.actor.' ? { type, output: d.output } : { type, error: d.error };
      }
    }
  }
  return { type };
}

/** A persisted snapshot at `value` whose invoked calls are in flight with the inputs the state's mappings give. */
function forkSnapshot(
  info: MachineInfo,
  value: unknown,
  context: Record<string, unknown>,
  event: { type: string },
): Record<string, unknown> {
  const resolved = resolveNodes(info.machine, value, context);
  const children: Record<string, unknown> = {};
  for (const node of resolved) {
    for (const invoke of node.invoke) {
      let input: unknown;
      try {
        input = typeof invoke.input === 'function' ? invoke.input({ context, event, self: undefined as never }) : invoke.input;
      } catch (error) {
        throw new FlowingError(
          'FORK_CONTEXT_INVALID',
          `the input of '${invoke.id}' cannot be computed from the fork's context: ${(error as Error).message}`,
          { details: { issues: [{ path: [], message: (error as Error).message }], invoke: invoke.id } },
        );
      }
      children[invoke.id] = {
        snapshot: { status: 'active', input },
        src: invoke.src,
        syncSnapshot: false,
        ...(invoke.systemId ? { systemId: invoke.systemId } : {}),
      };
    }
  }
  return { status: 'active', value, historyValue: {}, context, children };
}
