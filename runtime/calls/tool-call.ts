import type { ToolInvokeSpec } from '@flowing/spec';
import { sleep } from '../deadline.ts';
import { FlowingError, toFlowError, type FlowError } from '../errors.ts';
import { argsHash } from '../session/approvals.ts';
import type { JournalEntry } from '../store/types.ts';
import type { AnyTool } from '../tool.ts';
import type { CallContext, ToolCallInput } from './context.ts';
import { backoffDelay } from './backoff.ts';
import { attemptTool, parseToolInput } from './tool-attempt.ts';

/** A progress line longer than this is cut: the log is not a channel for results. */
const MAX_PROGRESS_CHARS = 2_000;

/** Error codes worth another attempt (declared tool codes are answers, not glitches). */
const RETRYABLE = new Set(['TOOL_FAILED', 'TOOL_TIMEOUT']);

export interface ToolCallOptions {
  tool: AnyTool;
  input: ToolCallInput;
  invoke?: ToolInvokeSpec;
  /** What to do with a started-but-never-completed non-idempotent call: stop the session, or throw to the caller (agents). */
  onUnknownOutcome: 'attention' | 'throw';
}

/**
 * Runs one tool call with the runtime's guarantees: journal, approval check, zod contract, timeout, retries only when
 * safe, structured errors and `tool.*` events. Resolves with the output or rejects with a FlowingError.
 */
export async function callTool(call: CallContext, options: ToolCallOptions): Promise<unknown> {
  await null; // leave XState's call stack: the journal and the log are written from here on
  const { tool, input } = options;
  const { key, clock } = call;
  const canRetry = tool.idempotent || input.idempotencyKey !== undefined;
  const recorded = call.recorded();
  if (recorded?.completed) {
    if (recorded.completed.ok) return recorded.completed.output;
    throw fromFlowError(recorded.completed.error);
  }
  const failed = (error: FlowError, attempts: number, startedAt?: number) => fail(call, tool, canRetry, error, attempts, startedAt);
  if (recorded && !canRetry) {
    if (options.onUnknownOutcome === 'attention') {
      call.needsAttention(recorded);
      // The session has stopped, so the machine never hears this; a promise left pending instead kept cancel waiting.
      throw new FlowingError('TOOL_UNKNOWN_OUTCOME', `call ${key} of '${tool.name}' has an unknown outcome; it waits for a person`);
    }
    call.emit('tool.unknown_outcome', { callId: key, tool: tool.name, startedAt: recorded.startedAt });
    const error = new FlowingError(
      'TOOL_UNKNOWN_OUTCOME',
      `call ${key} of '${tool.name}' was interrupted and its outcome is unknown; it was not run again`,
    );
    call.record({ ...recorded, completed: { at: clock.now(), ok: false, error: error.toJSON() } });
    await call.commit(true);
    throw error;
  }
  // A resumed call of an approved high-risk tool already passed the check (its approval is consumed by now).
  if (tool.risk === 'high' && !recorded) {
    const approval = call.approval();
    const hash = argsHash(input.args);
    if (approval?.decision === 'rejected' && approval.tool === tool.name) {
      return failed({ code: 'APPROVAL_REJECTED', message: rejectedMessage(tool.name, approval.reason) }, 0);
    }
    if (!approval || approval.decision !== 'approved' || approval.consumed || approval.tool !== tool.name || approval.argsHash !== hash) {
      return failed(
        { code: 'APPROVAL_REQUIRED', message: `'${tool.name}' is high-risk and runs only after an APPROVE for exactly these arguments` },
        0,
      );
    }
    call.consumeApproval();
  }
  const parsed = parseToolInput(tool, input.args);
  if (!parsed.ok) return failed(parsed.error, 0);
  const { deadline } = call;
  const startedAt = clock.now();
  /** This call's journal entry: started, or completed with its outcome. */
  const journal = (completed?: JournalEntry['completed']): JournalEntry =>
    completed
      ? { key, kind: 'tool', name: tool.name, idempotent: canRetry, startedAt, completed }
      : { key, kind: 'tool', name: tool.name, idempotent: canRetry, startedAt };
  let release: (() => void) | undefined;
  try {
    // A free slot is taken at once; only a wait needs a signal (made then).
    release = (!deadline.isAborted && call.slots.tryAcquire()) || (await call.slots.acquire(deadline));
    const idempotencyKey = input.idempotencyKey ?? `${call.sessionId}:${key}`;
    call.crashPoint('before-append');
    call.record(journal());
    call.emit('tool.started', { callId: key, tool: tool.name, args: parsed.args, idempotencyKey, resumed: recorded !== undefined });
    // A high-risk call waits too: its start and the approval it consumes are stored before it can pay out.
    await call.commit(!canRetry || tool.risk === 'high');
    if (deadline.isAborted) {
      // Cancelled while the start was being written: the tool never ran, and the journal says so.
      const error = { code: 'CANCELLED', message: `'${tool.name}' was cancelled before it ran` };
      call.record(journal({ at: clock.now(), ok: false, error }));
      return await failed(error, 0, startedAt);
    }
    if (tool.risk === 'high') call.crashPoint('after-approval-persist');
    call.crashPoint('after-append-before-call');
    const retries = canRetry ? (options.invoke?.retries ?? tool.retries) : 0;
    // The tool's `log` lines reach clients as they happen; none after the call was stopped.
    const progress = (message: string, data?: unknown) => {
      if (deadline.isAborted) return;
      call.emit('tool.progress', {
        callId: key,
        tool: tool.name,
        message: String(message).slice(0, MAX_PROGRESS_CHARS),
        ...(data === undefined ? {} : { data }),
      });
    };
    const timeoutMs = options.invoke?.timeoutMs ?? tool.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const output = await attemptTool(tool, parsed.args, { idempotencyKey, deadline, timeoutMs, clock, log: progress });
        call.crashPoint('after-effect-before-complete');
        call.record(journal({ at: clock.now(), ok: true, output }));
        call.emit('tool.completed', { callId: key, tool: tool.name, output, attempts: attempt, durationMs: clock.now() - startedAt });
        await call.commit(!canRetry);
        call.crashPoint('after-complete-before-transition');
        return output;
      } catch (thrown) {
        const error = toFlowError(thrown, 'TOOL_FAILED');
        if (attempt <= retries && RETRYABLE.has(error.code) && !deadline.isAborted) {
          const delayMs = backoffDelay(attempt, call.limits.retryBaseMs, call.limits.retryMaxMs, call.random);
          call.emit('tool.retry', { callId: key, tool: tool.name, attempt: attempt + 1, delayMs, error });
          await sleep(clock, delayMs, deadline);
          continue;
        }
        if (error.code === 'TOOL_TIMEOUT' && !canRetry) {
          // The request may have reached the service: say so, and never try again on our own.
          call.emit('tool.unknown_outcome', { callId: key, tool: tool.name, startedAt, reason: 'timeout' });
        }
        call.record(journal({ at: clock.now(), ok: false, error }));
        return await failed(error, attempt, startedAt);
      }
    }
  } catch (thrown) {
    if (thrown instanceof FlowingError) throw thrown;
    return failed(toFlowError(thrown, 'CANCELLED'), 0, startedAt);
  } finally {
    release?.();
  }
}

/**
 * Records a failed call and throws its error. Its records wait for the store when the call has side effects that
 * must not repeat; an idempotent call's records go with the next commit (the commit is atomic, so a stored
 * transition always has its result; a lost result only means one more idempotent call).
 */
async function fail(
  call: CallContext,
  tool: AnyTool,
  canRetry: boolean,
  error: FlowError,
  attempts: number,
  startedAt?: number,
): Promise<never> {
  call.emit('tool.failed', {
    callId: call.key,
    tool: tool.name,
    error,
    attempts,
    durationMs: startedAt === undefined ? 0 : call.clock.now() - startedAt,
  });
  await call.commit(!canRetry);
  throw fromFlowError(error);
}

/** What the machine's onError and an agent's model are told of a rejected call: the person's reason, when given. */
function rejectedMessage(tool: string, reason: string | undefined): string {
  return reason === undefined ? `'${tool}' was rejected by a person (no reason given)` : `'${tool}' was rejected by a person: ${reason}`;
}

/** A FlowingError from a stored `{ code, message, details }`. */
export function fromFlowError(error: FlowError): FlowingError {
  return new FlowingError(error.code, error.message, { details: error.details });
}
