import type { Resolution } from '@flowing/protocol';
import { FlowingError, formatIssues } from '../errors.ts';
import { freezeEvent, type RuntimeEvent } from '../events.ts';
import type { Runtime } from '../runtime.ts';
import type { JournalEntry, SessionRecord } from '../store/types.ts';
import { ServerError } from './errors.ts';
import { zodSchema } from '../tool.ts';

/**
 * Resolves a session in `needs_attention`. It stopped on a call: a non-idempotent call whose result was never
 * recorded (TOOL_UNKNOWN_OUTCOME), or a call whose result or error no branch took (GUARD_REJECTED, NO_TRANSITION)
 * or on which a guard or action threw (GUARD_THREW, ACTION_THREW, MACHINE_THREW). Its snapshot still has that call
 * in flight. The person's answer replaces the call's journal record, with a `tool.completed` / `tool.failed` (or,
 * for a retry, `tool.retry`) event marked `resolvedBy: 'person'`, in one optimistic commit; then the session
 * resumes: the restored call finds the record (or, for a retry, runs again) and the machine takes its branch, or
 * stops again, visibly, when the answer fits no branch either. Coded 409 NO_UNRESOLVED_CALL when there is nothing
 * to resolve, RESOLVE_RETRY_REFUSED for a retry of anything but an idempotent tool call.
 */
export async function resolveUnknownOutcome(runtime: Runtime, sessionId: string, resolution: Resolution, now: number): Promise<void> {
  const record = await runtime.store.load(sessionId);
  if (!record) throw new FlowingError('SESSION_NOT_FOUND', `no session '${sessionId}' in the ${runtime.store.name} store`);
  if (record.status !== 'needs_attention')
    throw new ServerError('NO_UNRESOLVED_CALL', `session ${sessionId} is ${record.status}, not needs_attention`);
  const inFlight = new Set(Object.values(record.calls ?? {}));
  const open = (await runtime.store.readJournal(sessionId)).filter((entry) => inFlight.has(entry.key));
  const entry = open.find((candidate) => candidate.key === resolution.callId);
  if (!entry) {
    const why =
      open.length === 0
        ? `it stopped on no call (${record.error?.code ?? 'no code'}): cancel it`
        : `open calls: ${open.map((e) => e.key).join(', ')}`;
    throw new ServerError(
      'NO_UNRESOLVED_CALL',
      `call ${JSON.stringify(resolution.callId.slice(0, 200))} is not a call session ${sessionId} stopped on (${why})`,
      { details: { openCalls: open.map((e) => e.key) } },
    );
  }
  const stoppedOn = record.error ? { code: record.error.code, message: record.error.message } : undefined;
  let event: RuntimeEvent;
  let journal: JournalEntry;
  if (resolution.outcome === 'retry') {
    if (entry.kind !== 'tool' || !entry.idempotent) {
      throw new ServerError(
        'RESOLVE_RETRY_REFUSED',
        `call ${entry.key} of '${entry.name}' is ${entry.kind === 'tool' ? 'not idempotent: it may have had its effect' : 'a model call'}; resolve it as completed (with its result) or failed instead`,
      );
    }
    const { completed: _dropped, ...started } = entry;
    journal = { ...started, startedAt: now };
    event = freezeEvent({
      seq: record.seq + 1,
      sessionId,
      traceId: record.traceId,
      at: now,
      type: 'tool.retry',
      data: {
        callId: entry.key,
        tool: entry.name,
        attempt: null,
        delayMs: 0,
        error: stoppedOn ?? null,
        resolvedBy: 'person',
        ...(resolution.note === undefined ? {} : { note: resolution.note }),
      },
    });
  } else {
    const completed = completion(runtime, record, entry, resolution, now);
    journal = { ...entry, completed };
    event = freezeEvent({
      seq: record.seq + 1,
      sessionId,
      traceId: record.traceId,
      at: now,
      type: resolution.outcome === 'completed' ? 'tool.completed' : 'tool.failed',
      data: {
        callId: entry.key,
        tool: entry.name,
        resolvedBy: 'person',
        ...(resolution.note === undefined ? {} : { note: resolution.note }),
        ...(completed.ok ? { output: completed.output } : { error: completed.error }),
      },
    });
  }
  const { error: _stoppedOn, ...rest } = record;
  const next: SessionRecord = { ...rest, status: 'running', version: record.version + 1, seq: record.seq + 1, updatedAt: now };
  await runtime.store.commit({ expectedVersion: record.version, record: next, events: [event], journal: [journal] });
  await runtime.resume(sessionId);
}

function completion(
  runtime: Runtime,
  record: SessionRecord,
  entry: JournalEntry,
  resolution: Exclude<Resolution, { outcome: 'retry' }>,
  now: number,
): NonNullable<JournalEntry['completed']> {
  if (resolution.outcome === 'failed') return { at: now, ok: false, error: resolution.error };
  const tool = entry.kind === 'tool' ? runtime.machines.get(record.machineId)?.definition.tools[entry.name] : undefined;
  if (!tool) return { at: now, ok: true, output: resolution.output };
  // The machine's onDone branches read the output as the tool's contract promises it.
  const parsed = zodSchema(tool.output).safeParse(resolution.output);
  if (!parsed.success) {
    throw new ServerError(
      'SERVER_INVALID_INPUT',
      `the output does not match the contract of '${entry.name}': ${formatIssues(parsed.error.issues)}`,
    );
  }
  return { at: now, ok: true, output: parsed.data };
}
