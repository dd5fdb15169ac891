import type { RuntimeEvent } from '../events.ts';
import { CASE_FORMAT_VERSION, type CallResult, type CaseFile, type CaseInput, type RecordedCall } from './case-file.ts';
import { TestingError } from './errors.ts';
import { observeLog } from './observe.ts';

const AFTER = 'xstate.after.';

export interface RecordCaseOptions {
  name: string;
  /** `run`, `service`, `inspector` ... (kept in the header). */
  source?: string;
  /** Final context keys to expect (default: all of them). */
  contextKeys?: readonly string[];
}

/**
 * Turns a session's log into a case: the events it received, the results its calls got, and what it did as the
 * expectation. `final` is the session's status and context at the end of the log.
 * @example caseFromLog(await session.events(), { status: snap.status, context: snap.context }, { name: 'refund-approved' })
 */
export function caseFromLog(
  events: readonly RuntimeEvent[],
  final: { status: string; context: unknown },
  options: RecordCaseOptions,
): CaseFile {
  const [first] = events;
  if (!first || first.type !== 'session.started')
    throw new TestingError('CASE_NOT_RECORDABLE', 'a case is recorded from a whole session log, starting with session.started');
  const started = first.data as { machineId?: string; specHash?: string; input?: unknown };
  const observation = observeLog(events, final.status, final.context);
  const context = options.contextKeys
    ? Object.fromEntries(options.contextKeys.filter((key) => key in observation.context).map((key) => [key, observation.context[key]]))
    : observation.context;
  return {
    header: {
      type: 'case',
      formatVersion: CASE_FORMAT_VERSION,
      machineId: String(started.machineId),
      specHash: String(started.specHash),
      name: options.name,
      ...(options.source ? { source: options.source } : {}),
      ...(started.input !== undefined && started.input !== null ? { input: started.input } : {}),
    },
    inputs: inputsOf(events),
    calls: callsOf(events),
    expect: { type: 'expect', status: observation.status, steps: observation.steps, context },
  };
}

/**
 * The events a session received from outside and its cancel, in order, and a `timer` input wherever it took a delayed
 * transition with no call in flight (a timer that fires while a call is in flight needs none: replay fires it while it
 * waits for that call).
 */
export function inputsOf(events: readonly RuntimeEvent[]): CaseInput[] {
  const inputs: CaseInput[] = [];
  const inFlight = new Set<string>();
  for (const event of events) {
    const data = event.data as { payload?: { type: string }; event?: unknown; reason?: string; callId?: unknown };
    if (event.type === 'tool.started' || event.type === 'llm.started' || event.type === 'machine.started')
      inFlight.add(String(data.callId));
    else if (
      ['tool.completed', 'tool.failed', 'llm.completed', 'llm.failed', 'tool.unknown_outcome', 'machine.done', 'machine.failed'].includes(
        event.type,
      )
    )
      inFlight.delete(String(data.callId));
    if (event.type === 'state.changed' && typeof data.event === 'string' && data.event.startsWith(AFTER) && inFlight.size === 0) {
      inputs.push({ type: 'timer', delay: data.event.slice(AFTER.length).split('.')[0]! });
    } else if ((event.type === 'state.changed' || event.type === 'transition.rejected') && data.payload) {
      inputs.push({ type: 'event', event: data.payload as { type: string; [key: string]: unknown } });
    } else if (event.type === 'transition.rejected' && typeof data.event === 'string' && !data.event.startsWith('xstate.')) {
      // Refused before its payload was read (an undeclared event): its type is all there is.
      inputs.push({ type: 'event', event: { type: data.event } });
    } else if (event.type === 'session.cancelled') {
      inputs.push({ type: 'cancel', ...(data.reason ? { reason: data.reason } : {}) });
    }
  }
  return inputs;
}

/**
 * The results the session's calls got, in the order they were answered (calls that never finished, `pending`, last):
 * replay hands them out in that order, so parallel calls finish as they did. A call refused before it ran (approval,
 * contract) has no result to feed back. Tool calls made inside an agent loop are left out: replay answers the agent
 * call as a whole.
 */
export function callsOf(events: readonly RuntimeEvent[]): RecordedCall[] {
  const calls: RecordedCall[] = [];
  const open = new Map<string, RecordedCall>();
  for (const event of events) {
    // biome-ignore lint/suspicious/noExplicitAny: each case below reads the fields its event type carries (RuntimeEvent data is untyped per type)
    const data = event.data as Record<string, any>;
    const callId = String(data.callId ?? '');
    switch (event.type) {
      case 'tool.started':
        if (callId.includes('/') || (data.resumed === true && open.has(callId))) break;
        open.set(callId, { type: 'call', call: 'tool', name: String(data.tool), input: data.args, result: { pending: true } });
        break;
      case 'llm.started':
        open.set(callId, { type: 'call', call: 'llm', name: String(data.kind), result: { pending: true } });
        break;
      case 'machine.started':
        if (data.resumed === true && open.has(callId)) break;
        open.set(callId, { type: 'call', call: 'machine', name: String(data.machine), input: data.input, result: { pending: true } });
        break;
      case 'tool.completed':
      case 'llm.completed':
      case 'machine.done':
        settle(calls, open, callId, { ok: true, output: data.output }, data.usage);
        break;
      case 'tool.failed':
      case 'llm.failed':
      case 'machine.failed':
        if (data.error?.code === 'CANCELLED') break; // the call was stopped, never answered: it stays pending
        settle(calls, open, callId, { ok: false, error: { code: String(data.error?.code), message: String(data.error?.message ?? '') } });
        break;
    }
  }
  calls.push(...open.values());
  return calls;
}

function settle(calls: RecordedCall[], open: Map<string, RecordedCall>, callId: string, result: CallResult, usage?: RecordedCall['usage']) {
  const call = open.get(callId);
  if (!call) return;
  call.result = result;
  if (usage && (usage.promptTokens > 0 || usage.completionTokens > 0)) call.usage = usage;
  open.delete(callId);
  calls.push(call);
}
