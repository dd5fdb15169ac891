import { z } from 'zod';
import { FlowingError, formatIssues } from '../errors.ts';
import { freezeEvent, type RuntimeEvent } from '../events.ts';
import type { Runtime } from '../runtime.ts';
import type { JournalEntry, SessionRecord } from '../store/types.ts';
import { ServerError } from './errors.ts';

/** What a person says about a call whose outcome is unknown: it completed with this output, or it failed. */
export const ResolutionBody = z.discriminatedUnion('outcome', [
  z.strictObject({ callId: z.string().min(1).max(400), outcome: z.literal('completed'), output: z.unknown(), note: z.string().max(2000).optional() }),
  z.strictObject({
    callId: z.string().min(1).max(400),
    outcome: z.literal('failed'),
    error: z.strictObject({ code: z.string().regex(/^[A-Z][A-Z0-9_]{0,63}$/, 'an error code is UPPER_SNAKE'), message: z.string().max(2000) }),
    note: z.string().max(2000).optional(),
  }),
]);
export type Resolution = z.infer<typeof ResolutionBody>;

/**
 * Resolves a session in `needs_attention` because a non-idempotent call started and its result was never recorded:
 * the person's answer is written as the call's journal record (with a `tool.completed` / `tool.failed` event marked
 * `resolvedBy: 'person'`) in one optimistic commit, and the session resumes: the restored call finds the record and
 * the machine takes its onDone / onError branch. The tool itself is never run again.
 */
export async function resolveUnknownOutcome(runtime: Runtime, sessionId: string, resolution: Resolution, now: number): Promise<void> {
  const record = await runtime.store.load(sessionId);
  if (!record) throw new FlowingError('SESSION_NOT_FOUND', `no session '${sessionId}' in the ${runtime.store.name} store`);
  if (record.status !== 'needs_attention') throw new ServerError('NO_UNRESOLVED_CALL', `session ${sessionId} is ${record.status}, not needs_attention`);
  const open = (await runtime.store.readJournal(sessionId)).filter((entry) => !entry.completed && Object.values(record.calls ?? {}).includes(entry.key));
  const entry = open.find((candidate) => candidate.key === resolution.callId);
  if (!entry) {
    throw new ServerError('NO_UNRESOLVED_CALL', `call ${JSON.stringify(resolution.callId.slice(0, 200))} of session ${sessionId} has no unknown outcome (open calls: ${open.map((e) => e.key).join(', ') || 'none'})`, { details: { openCalls: open.map((e) => e.key) } });
  }
  const completed = completion(runtime, record, entry, resolution, now);
  const event: RuntimeEvent = freezeEvent({
    seq: record.seq + 1, sessionId, traceId: record.traceId, at: now,
    type: resolution.outcome === 'completed' ? 'tool.completed' : 'tool.failed',
    data: {
      callId: entry.key, tool: entry.name, resolvedBy: 'person', ...(resolution.note === undefined ? {} : { note: resolution.note }),
      ...(completed.ok ? { output: completed.output } : { error: completed.error }),
    },
  });
  const { error: _unknownOutcome, ...rest } = record;
  const next: SessionRecord = { ...rest, status: 'running', version: record.version + 1, seq: record.seq + 1, updatedAt: now };
  await runtime.store.commit({ expectedVersion: record.version, record: next, events: [event], journal: [{ ...entry, completed }] });
  await runtime.resume(sessionId);
}

function completion(runtime: Runtime, record: SessionRecord, entry: JournalEntry, resolution: Resolution, now: number): NonNullable<JournalEntry['completed']> {
  if (resolution.outcome === 'failed') return { at: now, ok: false, error: resolution.error };
  const tool = entry.kind === 'tool' ? runtime.machines.get(record.machineId)?.definition.tools[entry.name] : undefined;
  if (!tool) return { at: now, ok: true, output: resolution.output };
  // The machine's onDone branches read the output as the tool's contract promises it.
  const parsed = tool.output.safeParse(resolution.output);
  if (!parsed.success) {
    throw new ServerError('SERVER_INVALID_INPUT', `the output does not match the contract of '${entry.name}': ${formatIssues(parsed.error.issues)}`);
  }
  return { at: now, ok: true, output: parsed.data };
}
