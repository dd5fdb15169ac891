import { FlowingError } from '../errors.ts';
import type { ChildSessions } from '../calls/context.ts';
import type { LlmCallOptions, LlmProvider, LlmRequest, LlmResult } from '../llm/types.ts';
import type { SessionRecord } from '../store/types.ts';
import { ToolError, type AnyTool } from '../tool.ts';
import type { CallResult, RecordedCall } from './case-file.ts';

export interface CaseCallsOptions {
  /** Answer in the order the results are listed (their completion order), not as soon as asked. */
  ordered?: boolean;
  /** Generated paths: no retries, and no tool timeout (an unanswered call waits for a timer of the machine). */
  holdTimeouts?: boolean;
}

/** The longest delay a timer takes (2^31 - 1 ms). */
const MAX_TIMER_MS = 2_147_483_647;

/** A call the replayed machine made that the recording has no result for (it was not made). */
export interface MissingCall {
  call: 'tool' | 'llm' | 'machine';
  name: string;
  input?: unknown;
}

/** Tool and model stand-ins that answer from a recording, and what they saw. */
export interface CaseCalls {
  /** The machine's tools with `run` replaced: same contracts, answers from the recording. */
  tools: Record<string, AnyTool>;
  llm: LlmProvider;
  /** Machine invokes: each child session's recorded end (its output or error), no child session started. */
  children: ChildSessions;
  /** Calls made that the recording lacks, in order. */
  readonly missing: MissingCall[];
  /** Recorded results nobody asked for. */
  unused(): RecordedCall[];
  /**
   * In order mode, lets the earliest waiting call have its answer when the one before it will never be asked for
   * (the machine changed); false when no call waits. The replay calls it when nothing else can happen.
   */
  release(): boolean;
}

/**
 * Feeds recorded results back instead of calling anything: each tool (and each model call kind) answers its calls
 * from its own queue of recorded results, in order, so parallel calls match whatever order they start in. A retry of a
 * call (same idempotency key) gets the same answer again. A call with no result left is refused with
 * REPLAY_MISSING_CALL and listed in `missing`; a `pending` result never answers (until the call is stopped).
 */
export function createCaseCalls(
  calls: readonly RecordedCall[],
  machineTools: Readonly<Record<string, AnyTool>>,
  options: CaseCallsOptions = {},
): CaseCalls {
  const order = options.ordered ? createTurns(calls) : undefined;
  const queues = new Map<string, RecordedCall[]>();
  for (const call of calls) {
    const key = `${call.call}:${call.name}`;
    const queue = queues.get(key) ?? [];
    queue.push(call);
    queues.set(key, queue);
  }
  const missing: MissingCall[] = [];
  const take = (call: RecordedCall['call'], name: string, input: unknown): RecordedCall => {
    const next = queues.get(`${call}:${name}`)?.shift();
    if (next) return next;
    missing.push({ call, name, ...(input === undefined ? {} : { input }) });
    const what = call === 'tool' ? `tool '${name}'` : call === 'machine' ? `child session of '${name}'` : `model call '${name}'`;
    throw new ToolError('REPLAY_MISSING_CALL', `the recording has no result for this ${what} call; replay never calls for real`);
  };

  const answered = new Map<string, CallResult>();
  const tools: Record<string, AnyTool> = {};
  for (const [name, tool] of Object.entries(machineTools)) {
    tools[name] = Object.freeze({
      ...tool,
      // Generated paths: a retried failure would be answered late (after its backoff), behind results listed after it;
      // a call left unanswered stands for one still running when a timer of the machine fires, not for a tool timeout.
      ...(options.holdTimeouts ? { retries: 0, timeoutMs: MAX_TIMER_MS } : {}),
      async run(input: unknown, context: { idempotencyKey: string; signal: AbortSignal }) {
        const again = answered.get(context.idempotencyKey);
        if (again) return answer(again, context.signal);
        const recorded = take('tool', name, input);
        answered.set(context.idempotencyKey, recorded.result);
        await order?.turn(recorded);
        return answer(recorded.result, context.signal);
      },
    }) as AnyTool;
  }

  const model = <T>(request: LlmRequest, options: LlmCallOptions): Promise<LlmResult<T>> => {
    if (request.repair) {
      missing.push({ call: 'llm', name: request.kind, input: { repair: request.repair.problem } });
      return Promise.reject(
        new FlowingError(
          'REPLAY_MISSING_CALL',
          `the recorded ${request.kind} answer is refused by the machine (${request.repair.problem}); a repair call is not in the recording`,
        ),
      );
    }
    let recorded: RecordedCall;
    try {
      recorded = take('llm', request.kind, undefined);
    } catch (error) {
      return Promise.reject(error);
    }
    return (order ? order.turn(recorded) : Promise.resolve())
      .then(() => answer(recorded.result, options.signal))
      .then((output) => {
        if (request.kind === 'generate') options.onDelta?.(String((output as { text?: unknown }).text ?? ''));
        return { output: output as T, model: 'recorded', usage: recorded.usage ?? { promptTokens: 0, completionTokens: 0 }, attempts: 1 };
      });
  };
  const llm: LlmProvider = {
    name: 'recorded',
    isModel: false,
    classify: model,
    extract: model,
    generate: model,
    agent: model,
  };
  const children: ChildSessions = {
    load: async () => undefined,
    async start(machineId, input, sessionId) {
      const recorded = take('machine', machineId, input);
      await order?.turn(recorded);
      return childRecord(sessionId, machineId, recorded.result);
    },
    // Only a child recorded while it still waited (`pending`) is looked at again: it still waits.
    attach: async (sessionId) => childRecord(sessionId, '', { pending: true }),
    cancel: async () => {},
  };
  return { tools, llm, children, missing, unused: () => [...queues.values()].flat(), release: () => order?.release() ?? false };
}

/**
 * The stored record a child session would have at its end: `done` with the recorded output, `cancelled` or `error`
 * with the recorded code, or `waiting` for a child that had not ended when the recording stopped.
 */
function childRecord(sessionId: string, machineId: string, result: CallResult): SessionRecord {
  const status = 'pending' in result ? 'waiting' : result.ok ? 'done' : result.error.code === 'SESSION_CANCELLED' ? 'cancelled' : 'error';
  return {
    sessionId,
    machineId,
    status,
    ...('pending' in result ? {} : result.ok ? { snapshot: { output: result.output } } : { error: result.error }),
  } as unknown as SessionRecord;
}

/**
 * Answers in the order of the recording, whatever order the calls start in: a result waits until every result
 * recorded before it was handed out, and the next turn comes a macrotask later, so the machine has taken the previous
 * answer first. (Parallel regions otherwise finish in the order their calls started.)
 */
function createTurns(calls: readonly RecordedCall[]) {
  const index = new Map(calls.map((call, i) => [call, i]));
  const done = new Set<number>();
  let next = 0;
  const waiting = new Map<number, () => void>();
  const advance = () => {
    while (done.has(next)) next++;
    waiting.get(next)?.();
  };
  return {
    turn(call: RecordedCall): Promise<void> {
      const i = index.get(call)!;
      const finish = () => {
        done.add(i);
        waiting.delete(i);
        setImmediate(advance);
      };
      if ('pending' in call.result || i === next) {
        finish();
        return Promise.resolve();
      }
      return new Promise<void>((resolve) =>
        waiting.set(i, () => {
          finish();
          resolve();
        }),
      );
    },
    release(): boolean {
      if (waiting.size === 0) return false;
      while (!waiting.has(next)) done.add(next++);
      waiting.get(next)!();
      return true;
    },
  };
}

/** The recorded answer: the output, the error thrown, or a wait that only the call's stop ends. */
function answer(result: CallResult, signal: AbortSignal): Promise<unknown> {
  if ('pending' in result) {
    return new Promise((_, reject) => {
      const stop = () => reject(new FlowingError('CANCELLED', 'the recorded call never finished and was stopped'));
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
  }
  if (result.ok) return Promise.resolve(result.output);
  return Promise.reject(new ToolError(result.error.code, result.error.message));
}
