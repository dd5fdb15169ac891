import type { AnyMachineDefinition } from '../definition.ts';
import { FlowingError, type FlowError } from '../errors.ts';
import type { RuntimeEvent } from '../events.ts';
import type { LlmCallOptions, LlmProvider, LlmRequest, LlmResult, LlmUsage } from '../llm/types.ts';
import { argsHash } from '../session/approvals.ts';
import { requestHash } from './request-hash.ts';
import type { JournalEntry } from '../store/types.ts';
import { defineTool, type AnyTool } from '../tool.ts';

/** What a recording answers with: the session's log, and optionally its journal (fills results the log lacks). */
export interface RecordedCallsOptions {
  /** The recorded log, from seq 1. */
  log: readonly RuntimeEvent[];
  journal?: readonly JournalEntry[];
  /** The machine whose tools are replaced: each keeps its contract (schemas, risk, retries); none keeps its `run`. */
  machine: AnyMachineDefinition;
}

/** One recorded call as `createRecordedCalls` reports it (misses, calls nobody asked for). */
export interface RecordedCallInfo {
  kind: 'tool' | 'llm';
  /** Tool name, or the model call's kind (classify, extract, generate, agent). */
  name: string;
  /** The invoke (named after its state) that made the call, when known. */
  state: string | null;
  /** sha256 of the stable JSON of the tool's arguments, or of the model request. */
  argsHash: string | null;
  callId: string | null;
}

/** Tool and model stand-ins that answer from a recording, and what they were asked. */
export interface RecordedCalls {
  /** Pass as `createRuntime({ tools })`: every tool of the machine, answering from the recording. */
  tools: Record<string, AnyTool>;
  /** Pass as `createRuntime({ llm })`: answers model calls from the recording. */
  llm: LlmProvider;
  /** Calls answered from the recording so far (tool attempts and model calls). */
  readonly answered: { tools: number; llm: number };
  /** Calls the recording could not answer, as REPLAY_MISSING_CALL errors, in the order they were asked. */
  readonly misses: readonly FlowingError[];
  /** Recorded calls not (yet) asked for. */
  unanswered(): RecordedCallInfo[];
}

interface ToolRecording {
  callId: string;
  name: string;
  hash: string;
  /** Errors of the attempts that were retried, in order; then `final`. */
  retried: FlowError[];
  final?: { ok: true; output: unknown } | { ok: false; error: FlowError };
  attemptsUsed: number;
  taken: boolean;
}

interface LlmRecording {
  callId: string;
  kind: string;
  hash: string | null;
  model: string | null;
  provider: string;
  isModel: boolean;
  /**
   * Retries, streamed text and agent steps in the order they were logged (a turn's retries come before its text, an
   * agent streams the text of a turn before its step).
   */
  played: Array<
    | { delta: string }
    | { step: Parameters<NonNullable<LlmCallOptions['onStep']>>[0] }
    | { retry: Parameters<NonNullable<LlmCallOptions['onRetry']>>[0] }
  >;
  final?:
    | { ok: true; output: unknown; model: string; usage: LlmUsage; attempts: number; finishReason?: string }
    | { ok: false; error: FlowError };
  taken: boolean;
}

const NO_USAGE: LlmUsage = { promptTokens: 0, completionTokens: 0 };

/** The invoke id in a call key `<invoke>@<step>` (agent calls add `/<n>`), or null for anything else. */
function stateOfCallId(callId: string | null | undefined): string | null {
  if (!callId) return null;
  const at = callId.indexOf('@');
  return at > 0 ? callId.slice(0, at) : null;
}

/** The call key inside the runtime's default idempotency key `<session>:<call key>`. */
function callIdOfIdempotencyKey(key: string): string | null {
  const colon = key.lastIndexOf(':');
  const callId = colon >= 0 ? key.slice(colon + 1) : key;
  return /^[^@]+@\d+(\/\d+)*$/.test(callId) ? callId : null;
}

/**
 * Stand-ins for a machine's tools and for the model that answer every call from a recorded session, in order, and
 * never make a real call. A tool call is matched by tool name + hash of its (validated) arguments + occurrence; a
 * model call by kind + hash of its request + occurrence (recordings from before requests were hashed: kind +
 * occurrence). Retried attempts fail again with their recorded errors (a model request's retries are logged again as
 * `llm.retry`), streamed text is streamed again, an agent's
 * steps and tool calls are played again. A call the recording lacks fails with REPLAY_MISSING_CALL (naming the kind,
 * state and hash), which the machine sees as the call's error and `misses` lists.
 * @example
 * const recorded = createRecordedCalls({ log: await session.events(), machine: orderSupport });
 * const runtime = createRuntime({ machines: [orderSupport], tools: recorded.tools, llm: recorded.llm });
 */
export function createRecordedCalls(options: RecordedCallsOptions): RecordedCalls {
  const { toolCalls, llmCalls } = readRecording(options.log, options.journal ?? []);
  const answered = { tools: 0, llm: 0 };
  const misses: FlowingError[] = [];

  function miss(info: RecordedCallInfo, why: string): FlowingError {
    const where = info.state ? ` in state '${info.state}'` : '';
    const hash = info.argsHash ? ` (args hash ${info.argsHash.slice(0, 12)})` : '';
    const error = new FlowingError(
      'REPLAY_MISSING_CALL',
      `the recording ${why}: ${info.kind === 'tool' ? 'tool' : 'model call'} '${info.name}'${where}${hash}; no real call is made in a replay`,
      { details: { ...info } },
    );
    misses.push(error);
    return error;
  }

  // Attempts of one call share its idempotency key; the key picks the recorded call its later attempts belong to.
  const byKey = new Map<string, ToolRecording>();
  const tools: Record<string, AnyTool> = {};
  for (const [name, tool] of Object.entries(options.machine.tools)) {
    tools[name] = defineTool({
      ...tool,
      run: async (input, context) => {
        const hash = argsHash(input);
        let call = byKey.get(context.idempotencyKey);
        if (!call || call.name !== name || call.hash !== hash || (call.final && call.attemptsUsed > call.retried.length)) {
          call = toolCalls.find((c) => !c.taken && c.name === name && c.hash === hash);
          const callId = callIdOfIdempotencyKey(context.idempotencyKey);
          if (!call) throw miss({ kind: 'tool', name, state: stateOfCallId(callId), argsHash: hash, callId }, 'holds no such call');
          call.taken = true;
          byKey.set(context.idempotencyKey, call);
        }
        const attempt = call.attemptsUsed++;
        answered.tools++;
        if (attempt < call.retried.length) throw storedError(call.retried[attempt]!);
        if (!call.final || attempt > call.retried.length) {
          throw miss(
            { kind: 'tool', name, state: stateOfCallId(call.callId), argsHash: hash, callId: call.callId },
            'has no result for this call (it never completed)',
          );
        }
        if (call.final.ok) return call.final.output as never;
        throw storedError(call.final.error);
      },
    }) as AnyTool;
  }

  let peeked: LlmRecording | undefined;
  const first = llmCalls[0];
  /** Agent calls stopped for proposals, by call id: a resumed call goes on with the same recording. */
  const suspended = new Map<string, LlmRecording>();
  function find(request: LlmRequest, callId?: string): LlmRecording | undefined {
    const stopped = callId === undefined ? undefined : suspended.get(callId);
    if (stopped) return stopped;
    const hash = requestHash(request);
    return llmCalls.find((c) => !c.taken && c.kind === request.kind && (c.hash === null || c.hash === hash));
  }
  async function answer(request: LlmRequest, callOptions: LlmCallOptions): Promise<LlmResult<never>> {
    const call = find(request, callOptions.resume ? (callOptions.callId ?? undefined) : undefined);
    peeked = undefined;
    if (!call) {
      const callId = callOptions.callId ?? null;
      throw miss(
        { kind: 'llm', name: request.kind, state: stateOfCallId(callId), argsHash: requestHash(request), callId },
        'holds no such call',
      );
    }
    call.taken = true;
    if (!callOptions.resume) answered.llm++;
    if (callOptions.callId !== undefined) suspended.delete(callOptions.callId);
    // A resumed agent call goes on after the step it stopped at for proposals.
    const from = callOptions.resume?.iteration ?? 0;
    const start = from === 0 ? 0 : call.played.findIndex((part) => 'step' in part && part.step.iteration === from) + 1;
    for (const part of call.played.slice(start)) {
      // A retried request is logged again as it was; its wait is not (no request is made, so nothing waits).
      if ('retry' in part) {
        callOptions.onRetry?.(part.retry);
        continue;
      }
      if ('delta' in part) {
        callOptions.onDelta?.(part.delta);
        continue;
      }
      callOptions.onStep?.(part.step);
      const proposed = part.step.toolCalls.filter((c) => !c.refused && callOptions.needsApproval?.(c.name));
      for (const toolCall of part.step.toolCalls)
        if (!proposed.includes(toolCall)) await callOptions.callTool?.(toolCall.name, toolCall.args);
      if (proposed.length > 0) {
        // The recording stopped here for a person's decision: so does the replay (the decision is replayed from the log).
        if (callOptions.callId !== undefined) suspended.set(callOptions.callId, call);
        const pending = proposed.map(({ id, name, args }) => ({ id, name, args }));
        const output = {
          text: '',
          steps: part.step.iteration,
          suspended: { iteration: part.step.iteration, messages: [], answers: {}, pending },
        };
        return { output: output as never, model: call.final?.ok ? call.final.model : 'recorded', usage: NO_USAGE, attempts: 0 };
      }
    }
    if (!call.final)
      throw miss(
        { kind: 'llm', name: call.kind, state: stateOfCallId(call.callId), argsHash: call.hash, callId: call.callId },
        'has no result for this call (it never completed)',
      );
    if (!call.final.ok) throw storedError(call.final.error);
    const { output, model, usage, attempts, finishReason } = call.final;
    return { output: output as never, model, usage, attempts, ...(finishReason === undefined ? {} : { finishReason }) };
  }

  const llm: LlmProvider = {
    // The log names the provider and model of each call; the stand-in says what the recording said.
    get name() {
      return peeked?.provider ?? first?.provider ?? 'recorded';
    },
    get isModel() {
      return peeked?.isModel ?? first?.isModel ?? false;
    },
    modelFor(request) {
      peeked = find(request);
      return peeked?.model ?? undefined;
    },
    classify: answer,
    extract: answer,
    generate: answer,
    agent: answer,
  };

  return {
    tools,
    llm,
    answered,
    misses,
    unanswered() {
      return [
        ...toolCalls
          .filter((c) => !c.taken)
          .map(
            (c): RecordedCallInfo => ({ kind: 'tool', name: c.name, state: stateOfCallId(c.callId), argsHash: c.hash, callId: c.callId }),
          ),
        ...llmCalls
          .filter((c) => !c.taken)
          .map(
            (c): RecordedCallInfo => ({ kind: 'llm', name: c.kind, state: stateOfCallId(c.callId), argsHash: c.hash, callId: c.callId }),
          ),
      ];
    },
  };
}

function storedError(error: FlowError): FlowingError {
  return new FlowingError(error.code, error.message, { details: error.details });
}

/** The calls of a recording in the order they started, with their outcomes. */
function readRecording(log: readonly RuntimeEvent[], journal: readonly JournalEntry[]) {
  const toolCalls: ToolRecording[] = [];
  const llmCalls: LlmRecording[] = [];
  const tools = new Map<string, ToolRecording>();
  const models = new Map<string, LlmRecording>();
  for (const event of log) {
    const d = event.data as Record<string, unknown>;
    const callId = typeof d.callId === 'string' ? d.callId : '';
    switch (event.type) {
      case 'tool.started':
        // A call resumed after a crash starts again under the same id: still one call.
        if (!tools.has(callId)) {
          const call: ToolRecording = { callId, name: String(d.tool), hash: argsHash(d.args), retried: [], attemptsUsed: 0, taken: false };
          tools.set(callId, call);
          toolCalls.push(call);
        }
        break;
      case 'tool.retry':
        tools.get(callId)?.retried.push(d.error as FlowError);
        break;
      case 'tool.completed':
      case 'tool.failed': {
        const call = tools.get(callId);
        if (call && !call.final)
          call.final = event.type === 'tool.completed' ? { ok: true, output: d.output } : { ok: false, error: d.error as FlowError };
        break;
      }
      case 'llm.started':
        if (!models.has(callId)) {
          const call: LlmRecording = {
            callId,
            kind: String(d.kind),
            hash: typeof d.inputHash === 'string' ? d.inputHash : null,
            model: typeof d.model === 'string' ? d.model : null,
            provider: typeof d.provider === 'string' ? d.provider : 'recorded',
            isModel: d.isModel === true,
            played: [],
            taken: false,
          };
          models.set(callId, call);
          llmCalls.push(call);
        }
        break;
      case 'message.delta':
        models.get(callId)?.played.push({ delta: String(d.text) });
        break;
      case 'llm.retry': {
        const { attempt, delayMs, error } = d as { attempt: number; delayMs: number; error: { code: string; message: string } };
        models.get(callId)?.played.push({ retry: { attempt, delayMs, error } });
        break;
      }
      case 'agent.step': {
        const { callId: _id, ...step } = d;
        models.get(callId)?.played.push({ step: step as never });
        break;
      }
      case 'llm.completed': {
        const call = models.get(callId);
        if (call && !call.final) {
          call.final = {
            ok: true,
            output: d.output,
            model: String(d.model),
            usage: (d.usage as LlmUsage) ?? NO_USAGE,
            attempts: typeof d.attempts === 'number' ? d.attempts : 1,
            ...(typeof d.finishReason === 'string' ? { finishReason: d.finishReason } : {}),
          };
        }
        break;
      }
      case 'llm.failed': {
        const call = models.get(callId);
        if (call && !call.final) call.final = { ok: false, error: d.error as FlowError };
        break;
      }
    }
  }
  // The journal holds results a log may lack (a log cut where a call was in flight, then completed).
  for (const entry of journal) {
    if (!entry.completed) continue;
    const done = entry.completed;
    const tool = entry.kind === 'tool' ? tools.get(entry.key) : undefined;
    if (tool && !tool.final) tool.final = done.ok ? { ok: true, output: done.output } : { ok: false, error: done.error };
    const model = entry.kind === 'llm' ? models.get(entry.key) : undefined;
    if (model && !model.final)
      model.final = done.ok
        ? { ok: true, output: done.output, model: model.model ?? 'recorded', usage: NO_USAGE, attempts: 1 }
        : { ok: false, error: done.error };
  }
  return { toolCalls, llmCalls };
}
