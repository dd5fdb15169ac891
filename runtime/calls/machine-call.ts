import { hash } from 'node:crypto';
import { FlowingError, toFlowError, type FlowError } from '../errors.ts';
import type { JournalEntry, SessionRecord } from '../store/types.ts';
import type { CallContext } from './context.ts';
import { fromFlowError } from './tool-call.ts';

/** The longest session id (protocol SESSION_ID_PATTERN). */
const MAX_SESSION_ID = 128;

/**
 * The id of the child session a machine call starts: derived from the parent's id and the call's journal key, so a
 * parent resumed after a crash finds its child again instead of starting a second one. Readable
 * (`<parent>_<state>_<step>`) while it fits a session id; a hash of the same parts beyond.
 */
export function childSessionId(parentId: string, callKey: string): string {
  const readable = `${parentId}_${callKey.replace('@', '_')}`;
  if (readable.length <= MAX_SESSION_ID) return readable;
  return `child_${hash('sha256', `${parentId}/${callKey}`, 'hex').slice(0, 48)}`;
}

/**
 * Runs one machine call: starts the child session of `machineId` with `input` (or finds the one an earlier run of
 * this call started), waits while it is quiet for a person (the parent is `waiting` meanwhile), and resolves with the
 * child's output when it ends in a final state, or rejects with its error. Journaled like any call: a completed call
 * answers from the journal; the child's id is derived from the call's key, so a restart never starts a second child.
 * A state left while the call runs cancels the child.
 */
export async function callMachine(call: CallContext, machineId: string, input: unknown): Promise<unknown> {
  await null; // leave XState's call stack: the journal and the log are written from here on
  const { key, clock, deadline } = call;
  const recorded = call.recorded();
  if (recorded?.completed) {
    if (recorded.completed.ok) return recorded.completed.output;
    throw fromFlowError(recorded.completed.error);
  }
  const childId = childSessionId(call.sessionId, key);
  const startedAt = recorded?.startedAt ?? clock.now();
  const journal = (completed?: JournalEntry['completed']): JournalEntry => ({
    key,
    kind: 'machine',
    name: machineId,
    idempotent: false,
    startedAt,
    ...(completed ? { completed } : {}),
  });
  const fail = async (error: FlowError): Promise<never> => {
    call.record(journal({ at: clock.now(), ok: false, error }));
    call.emit('machine.failed', { callId: key, machine: machineId, childId, error });
    await call.commit(true);
    throw fromFlowError(error);
  };
  const depth = call.depth + 1;
  if (depth > call.limits.machineDepth) {
    return fail({
      code: 'MACHINE_DEPTH_EXCEEDED',
      message: `state '${call.invokeId}' would start a session of '${machineId}' at depth ${depth}; child sessions nest at most ${call.limits.machineDepth} deep (limits.machineDepth)`,
      details: { depth, limit: call.limits.machineDepth },
    });
  }
  try {
    let child = await call.children.load(childId);
    if (child && (child.parent?.sessionId !== call.sessionId || child.parent.callId !== key)) {
      return await fail({
        code: 'CHILD_FAILED',
        message: `session '${childId}' exists but is not the child of call ${key} of session ${call.sessionId}`,
        details: { childId },
      });
    }
    if (!child) {
      call.record(journal());
      call.emit('machine.started', { callId: key, machine: machineId, childId, input: input ?? null, resumed: recorded !== undefined });
      // The start is stored before the child exists: a restart then looks for the child instead of guessing.
      await call.commit(true);
      call.crashPoint('machine-before-child');
      if (deadline.isAborted) return await left(call, childId, machineId);
      child = await call.children.start(machineId, input, childId, { sessionId: call.sessionId, state: call.invokeId, callId: key, depth });
    } else if (child.status === 'running' || child.status === 'waiting') {
      child = await call.children.attach(childId);
    }
    // The wait last logged (journaled, so a restored run knows it too): `machine.waiting` is logged once per wait.
    const waits = call.nested(waitingKey(key), deadline);
    let logged = waitOf(waits.recorded());
    for (;;) {
      if (deadline.isAborted) return await left(call, childId, machineId);
      const ended = outcomeOf(child, machineId);
      if (ended) call.crashPoint('machine-child-ended');
      if (ended?.ok) {
        call.record(journal({ at: clock.now(), ok: true, output: ended.output }));
        call.emit('machine.done', { callId: key, machine: machineId, childId, output: ended.output, durationMs: clock.now() - startedAt });
        await call.commit(true);
        return ended.output;
      }
      if (ended) return await fail(ended.error);
      // The child waits (for a person, or for its own child): so does this session, until the child moves on.
      const pending = child.approval && !child.approval.decision ? { approvalId: child.approval.id, tool: child.approval.tool } : {};
      const wait: Wait = { status: child.status, approvalId: pending.approvalId ?? null };
      if (logged?.status !== wait.status || logged.approvalId !== wait.approvalId) {
        const at = clock.now();
        waits.record({
          key: waitingKey(key),
          kind: 'machine',
          name: machineId,
          idempotent: true,
          startedAt: at,
          completed: { at, ok: true, output: wait },
        });
        call.emit('machine.waiting', { callId: key, machine: machineId, childId, status: child.status, ...pending });
        logged = wait;
      }
      await call.pause();
      child = await call.children.attach(childId);
    }
  } catch (thrown) {
    if (thrown instanceof FlowingError && deadline.isAborted) return left(call, childId, machineId);
    throw thrown instanceof FlowingError ? thrown : toFlowError(thrown, 'CHILD_FAILED');
  }
}

/** What a parent waits for: its child's status and the approval the child waits for, if any. */
interface Wait {
  status: string;
  approvalId: string | null;
}

/** The journal key of the wait a machine call last logged. */
function waitingKey(callKey: string): string {
  return `${callKey}/waiting`;
}

function waitOf(entry: JournalEntry | undefined): Wait | undefined {
  const output = entry?.completed?.ok ? (entry.completed.output as Partial<Wait> | undefined) : undefined;
  return typeof output?.status === 'string' ? { status: output.status, approvalId: output.approvalId ?? null } : undefined;
}

/** The child's end: its output, or its failure as the call's error; undefined while it has not ended. */
function outcomeOf(child: SessionRecord, machineId: string): { ok: true; output: unknown } | { ok: false; error: FlowError } | undefined {
  const details = { childId: child.sessionId, machine: machineId };
  switch (child.status) {
    case 'done':
      return { ok: true, output: (child.snapshot as { output?: unknown } | undefined)?.output ?? {} };
    case 'error':
      return {
        ok: false,
        error: {
          code: child.error?.code ?? 'CHILD_FAILED',
          message: `child session ${child.sessionId} of '${machineId}' failed: ${child.error?.message ?? 'no message'}`,
          details,
        },
      };
    case 'cancelled':
      return {
        ok: false,
        error: { code: 'SESSION_CANCELLED', message: `child session ${child.sessionId} of '${machineId}' was cancelled`, details },
      };
    default:
      return undefined;
  }
}

/**
 * The call's deadline aborted. When its state was left (the session runs on), the child has no use and is cancelled;
 * when the whole run stopped (parked, cancelled, taken over) the child is left alone: a cancel cancels it itself, and
 * a run restored later finds it again.
 */
async function left(call: CallContext, childId: string, machineId: string): Promise<never> {
  if (!call.runStopped) {
    await call.children.cancel(childId, `the state '${call.invokeId}' that invoked it was left`).catch(() => {});
  }
  throw new FlowingError('CANCELLED', `the call of machine '${machineId}' (child ${childId}) was stopped`);
}
