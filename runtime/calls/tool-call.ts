import type { ToolInvokeSpec } from '@flowing/spec';
import type { ToolCallInput } from '../actors.ts';
import { FlowingError, toFlowError, type FlowError } from '../errors.ts';
import type { AnyTool } from '../tool.ts';
import { crashPoint } from '../crash-points.ts';
import { argsHash } from '../session/approvals.ts';
import type { SessionRun } from '../session/run.ts';
import { backoffDelay, sleep, type CallScope } from './signals.ts';
import { attemptTool, parseToolInput } from './tool-attempt.ts';

/** Error codes worth another attempt (declared tool codes are answers, not glitches). */
const RETRYABLE = new Set(['TOOL_FAILED', 'TOOL_TIMEOUT']);

export interface ToolCallOptions {
  run: SessionRun;
  /** Journal key, stable across resumes. */
  key: string;
  tool: AnyTool;
  input: ToolCallInput;
  /** Stops when XState stops the invoking actor (or the agent loop that makes the call ends). */
  scope: CallScope;
  invoke?: ToolInvokeSpec;
  /** What to do with a started-but-never-completed non-idempotent call: stop the session, or throw to the caller (agents). */
  onUnknownOutcome: 'attention' | 'throw';
}

/**
 * Runs one tool call with the runtime's guarantees: journal, approval check, zod contract, timeout, retries only when
 * safe, structured errors and `tool.*` events. Resolves with the output or rejects with a FlowingError.
 */
export async function callTool(options: ToolCallOptions): Promise<unknown> {
  await null; // leave XState's call stack: the journal and the log are written from here on
  const { run, key, tool, input } = options;
  const canRetry = tool.idempotent || input.idempotencyKey !== undefined;
  const recorded = run.journal.get(key);
  if (recorded?.completed) {
    if (recorded.completed.ok) return recorded.completed.output;
    throw fromFlowError(recorded.completed.error);
  }
  if (recorded && !canRetry) {
    if (options.onUnknownOutcome === 'attention') {
      run.needsAttention(recorded);
      // The session has stopped, so the machine never hears this; a promise left pending instead kept cancel waiting.
      throw new FlowingError('TOOL_UNKNOWN_OUTCOME', `call ${key} of '${tool.name}' has an unknown outcome; it waits for a person`);
    }
    run.append('tool.unknown_outcome', { callId: key, tool: tool.name, startedAt: recorded.startedAt });
    const error = new FlowingError('TOOL_UNKNOWN_OUTCOME', `call ${key} of '${tool.name}' was interrupted and its outcome is unknown; it was not run again`);
    run.journalWrite({ ...recorded, completed: { at: run.host.clock.now(), ok: false, error: error.toJSON() } });
    await run.flush();
    throw error;
  }
  // A resumed call of an approved high-risk tool already passed the check (its approval is consumed by now).
  if (tool.risk === 'high' && !recorded) {
    const approval = run.approval;
    const hash = argsHash(input.args);
    if (approval?.decision === 'rejected' && approval.tool === tool.name) {
      return fail(run, key, tool, canRetry, { code: 'APPROVAL_REJECTED', message: `'${tool.name}' was rejected by a person and does not run` }, 0);
    }
    if (!approval || approval.decision !== 'approved' || approval.consumed || approval.tool !== tool.name || approval.argsHash !== hash) {
      return fail(run, key, tool, canRetry, { code: 'APPROVAL_REQUIRED', message: `'${tool.name}' is high-risk and runs only after an APPROVE for exactly these arguments` }, 0);
    }
    run.approval = { ...approval, consumed: true };
  }
  const parsed = parseToolInput(tool, input.args);
  if (!parsed.ok) return fail(run, key, tool, canRetry, parsed.error, 0);
  const { host } = run;
  const scope = options.scope;
  const startedAt = host.clock.now();
  let release: (() => void) | undefined;
  try {
    // A free slot is taken at once; only a wait needs a signal (made then).
    release = (!scope.stopped && host.calls.tryAcquire()) || await host.calls.acquire(scope.signal);
    const idempotencyKey = input.idempotencyKey ?? `${run.sessionId}:${key}`;
    crashPoint('before-append');
    run.journalWrite({ key, kind: 'tool', name: tool.name, idempotent: canRetry, startedAt });
    run.append('tool.started', { callId: key, tool: tool.name, args: parsed.args, idempotencyKey, resumed: recorded !== undefined });
    // A high-risk call waits too: its start and the approval it consumes are stored before it can pay out.
    await durable(run, canRetry && tool.risk !== 'high');
    if (scope.stopped) {
      // Cancelled while the start was being written: the tool never ran, and the journal says so.
      const error = { code: 'CANCELLED', message: `'${tool.name}' was cancelled before it ran` };
      run.journalWrite({ key, kind: 'tool', name: tool.name, idempotent: canRetry, startedAt, completed: { at: host.clock.now(), ok: false, error } });
      return await fail(run, key, tool, canRetry, error, 0, startedAt);
    }
    if (tool.risk === 'high') crashPoint('after-approval-persist');
    crashPoint('after-append-before-call');
    const retries = canRetry ? (options.invoke?.retries ?? tool.retries) : 0;
    const timeoutMs = options.invoke?.timeoutMs ?? tool.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const output = await attemptTool(tool, parsed.args, { idempotencyKey, signal: scope, timeoutMs, clock: host.clock });
        crashPoint('after-effect-before-complete');
        run.journalWrite({ key, kind: 'tool', name: tool.name, idempotent: canRetry, startedAt, completed: { at: host.clock.now(), ok: true, output } });
        run.append('tool.completed', { callId: key, tool: tool.name, output, attempts: attempt, durationMs: host.clock.now() - startedAt });
        await durable(run, canRetry);
        crashPoint('after-complete-before-transition');
        return output;
      } catch (thrown) {
        const error = toFlowError(thrown, 'TOOL_FAILED');
        if (attempt <= retries && RETRYABLE.has(error.code) && !scope.stopped) {
          const delayMs = backoffDelay(attempt, host.limits.retryBaseMs, host.limits.retryMaxMs, host.random);
          run.append('tool.retry', { callId: key, tool: tool.name, attempt: attempt + 1, delayMs, error });
          await sleep(host.clock, delayMs, scope.signal);
          continue;
        }
        if (error.code === 'TOOL_TIMEOUT' && !canRetry) {
          // The request may have reached the service: say so, and never try again on our own.
          run.append('tool.unknown_outcome', { callId: key, tool: tool.name, startedAt, reason: 'timeout' });
        }
        run.journalWrite({ key, kind: 'tool', name: tool.name, idempotent: canRetry, startedAt, completed: { at: host.clock.now(), ok: false, error } });
        return await fail(run, key, tool, canRetry, error, attempt, startedAt);
      }
    }
  } catch (thrown) {
    if (thrown instanceof FlowingError) throw thrown;
    const error = toFlowError(thrown, 'CANCELLED');
    return fail(run, key, tool, canRetry, error, 0, startedAt);
  } finally {
    release?.();
  }
}

/** Records a failed call and throws its error. */
async function fail(run: SessionRun, key: string, tool: AnyTool, canRetry: boolean, error: FlowError, attempts: number, startedAt?: number): Promise<never> {
  run.append('tool.failed', { callId: key, tool: tool.name, error, attempts, durationMs: startedAt === undefined ? 0 : run.host.clock.now() - startedAt });
  await durable(run, canRetry);
  throw fromFlowError(error);
}

/**
 * Waits for the journal to reach the store when the call has side effects that must not repeat: `started` before
 * `run`, `completed` before the machine moves on. An idempotent call's records go with the next commit (the commit
 * is atomic, so a stored transition always has its result; a lost result only means one more idempotent call).
 */
function durable(run: SessionRun, idempotent: boolean): Promise<void> {
  if (!idempotent) return run.flush();
  run.scheduleCommit();
  return Promise.resolve();
}

/** A FlowingError from a stored `{ code, message, details }`. */
export function fromFlowError(error: FlowError): FlowingError {
  return new FlowingError(error.code, error.message, { details: error.details });
}
