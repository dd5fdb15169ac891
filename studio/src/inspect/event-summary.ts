import { changesContext, type RuntimeEvent } from '@flowing/protocol';

const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
const json = (value: unknown, max = 60) => clip(JSON.stringify(value) ?? 'undefined', max);
const str = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

/** Dotted leaf paths of a state value, joined for one line (`active.idle`, `triage.{logs.done, metrics.wait}`). */
export function stateText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return String(value);
  const parts = Object.entries(value).map(([key, child]) => (typeof child === 'string' ? `${key}.${child}` : `${key}.${stateText(child)}`));
  return parts.length === 1 ? parts[0]! : `{${parts.join(', ')}}`;
}

/**
 * The version (spec hash) of the machine a session ran under at event `index`: the one its log started with, or the
 * one the last `session.migrated` up to there carried it to.
 */
export function versionAt(events: readonly RuntimeEvent[], index: number): { version: string; migratedFrom?: string } | undefined {
  for (let i = Math.min(index, events.length - 1); i >= 0; i--) {
    const event = events[i]!;
    if (event.type === 'session.migrated') return { version: str(event.data.toVersion), migratedFrom: str(event.data.fromVersion) };
    if (event.type === 'session.started') return { version: str(event.data.specHash) };
  }
  return undefined;
}

/** The one-line summary of an event in the event list. */
export function summarize(event: RuntimeEvent): string {
  const d = event.data;
  switch (event.type) {
    case 'session.started':
      return `machine ${str(d.machineId)} version ${str(d.specHash).slice(0, 12)}${d.input ? `, input ${json(d.input)}` : ''}`;
    case 'session.migrated':
      return `version ${str(d.fromVersion).slice(0, 12)} → ${str(d.toVersion).slice(0, 12)}, now in ${stateText(d.state)}${d.hook ? ' (migration hook)' : ''}`;
    case 'state.changed':
      return `→ ${stateText(d.state)} ← ${str(d.event) || '(init)'}${changesContext(d) ? ' · context changed' : ''}`;
    case 'transition.rejected':
      return `${str(d.event)} refused in ${(d.states as string[] | undefined)?.join(', ') || '?'}: ${str(d.code)} — ${clip(str(d.reason), 100)}`;
    case 'tool.started':
      return `${str(d.tool)}(${json(d.args)})${d.resumed ? ' (resumed)' : ''}`;
    case 'tool.retry':
      return `${str(d.tool)} attempt ${str(d.attempt)} in ${str(d.delayMs)} ms: ${str((d.error as { code?: string } | undefined)?.code)}`;
    case 'tool.completed':
      return `${str(d.tool)} → ${json(d.output)} (${str(d.durationMs)} ms)`;
    case 'tool.progress':
      return `${str(d.tool)}: ${clip(str(d.message), 100)}`;
    case 'tool.bind_overridden':
      return `${str(d.tool)}: the model sent ${json(d.sent)}; the bound value was used`;
    case 'tool.failed':
      return `${str(d.tool)} failed: ${str((d.error as { code?: string } | undefined)?.code)} ${clip(str((d.error as { message?: string } | undefined)?.message ?? ''), 60)}`;
    case 'tool.unknown_outcome':
      return `${str(d.tool)}: result never recorded — needs attention`;
    case 'approval.requested':
      return `${str(d.tool)}(${json(d.args)}) waits for approval in ${str(d.state)}`;
    case 'approval.decided':
      return `${str(d.decision)}: ${str(d.tool)}${d.reason ? ` — ${clip(str(d.reason), 60)}` : ''}`;
    case 'conversation.summary_failed':
      return `summary failed (${str((d.error as { code?: string } | undefined)?.code)}): the last ${str(d.window)} turns were sent`;
    case 'llm.started':
      return `${str(d.kind)} on ${str(d.model ?? d.provider)}`;
    case 'llm.completed':
      return `${str(d.kind)} → ${json(d.output)} (${str(d.latencyMs)} ms)`;
    case 'llm.failed':
      return `${str(d.kind)} failed: ${str((d.error as { code?: string } | undefined)?.code)}`;
    case 'llm.retry':
      return `${str(d.kind)} attempt ${str(d.attempt)} in ${str(d.delayMs)} ms: ${str((d.error as { code?: string } | undefined)?.code)}`;
    case 'agent.step':
      return clip(json(d, 100), 100);
    case 'message.delta':
      return json(d.text, 80);
    case 'message.complete':
      return clip(str(d.text), 100);
    case 'error':
      return `${str(d.code)}: ${clip(str(d.message), 100)}${d.recoverable ? ' (recoverable)' : ''}`;
    case 'session.cancelled':
      return clip(str(d.reason), 100);
    case 'session.done':
      return `in ${stateText(d.state)}`;
    default:
      return json(d, 100);
  }
}

/** Time of day with milliseconds (`14:03:07.120`), in the viewer's zone. */
export function timeText(at: number): string {
  const date = new Date(at);
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/** The CSS tone of an event type: refusals and errors red, calls blue, approvals amber. */
export function toneOf(type: string): 'rejected' | 'error' | 'call' | 'approval' | 'state' | 'message' | 'plain' {
  if (type === 'transition.rejected') return 'rejected';
  if (type === 'error' || type.endsWith('.failed') || type === 'tool.unknown_outcome') return 'error';
  if (type.startsWith('tool.') || type.startsWith('llm.') || type === 'agent.step') return 'call';
  if (type.startsWith('approval.')) return 'approval';
  if (type === 'state.changed') return 'state';
  if (type.startsWith('message.')) return 'message';
  return 'plain';
}
