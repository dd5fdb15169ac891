import type { RuntimeEvent } from '../events.ts';
import type { CaseStep } from './case-file.ts';

/** What a session did, read from its log: the timeline, the transitions taken and how it ended. */
export interface Observation {
  status: string;
  steps: CaseStep[];
  context: Record<string, unknown>;
  /** Every transition taken, as `source|event|targets` keys (for coverage). */
  transitions: string[];
  /** Every state value the session was in. */
  stateValues: unknown[];
  /** Model calls made, tokens spent. */
  modelCalls: number;
  tokens: number;
}

/**
 * Reads the timeline of a session from its event log: states entered, events refused, tool calls with their inputs,
 * model calls with their outputs, replies; `status` and `context` are the session's final ones. `started` are the
 * transitions taken as the session started (see startTransitions), which the log does not list.
 */
export function observeLog(
  events: readonly RuntimeEvent[],
  status: string,
  context: unknown,
  started: readonly string[] = [],
): Observation {
  const steps: CaseStep[] = [];
  const transitions: string[] = [...started];
  const stateValues: unknown[] = [];
  let modelCalls = 0;
  let tokens = 0;
  for (const event of events) {
    // biome-ignore lint/suspicious/noExplicitAny: each case below reads the fields its event type carries (RuntimeEvent data is untyped per type)
    const data = event.data as Record<string, any>;
    switch (event.type) {
      case 'state.changed':
        steps.push({ state: stateLabel(data.state) });
        stateValues.push(data.state);
        for (const t of (data.transitions ?? []) as Array<{ event: string; source: string; targets: string[] }>)
          transitions.push(transitionKey(t.source, t.event, t.targets));
        break;
      case 'transition.rejected':
        steps.push({ rejected: String(data.event), code: String(data.code) });
        break;
      case 'tool.started':
        if (!String(data.callId).includes('/')) steps.push({ tool: String(data.tool), input: data.args });
        break;
      case 'llm.completed':
        modelCalls += Number(data.attempts ?? 1);
        tokens += Number(data.usage?.promptTokens ?? 0) + Number(data.usage?.completionTokens ?? 0);
        steps.push({ model: String(data.kind), output: data.output });
        break;
      case 'llm.failed':
        steps.push({ model: String(data.kind), output: { error: data.error?.code } });
        break;
      case 'message.complete':
        steps.push({ reply: String(data.text) });
        break;
    }
  }
  const ctx = context !== null && typeof context === 'object' ? { ...(context as Record<string, unknown>) } : {};
  return { status, steps, context: ctx, transitions, stateValues, modelCalls, tokens };
}

/** The identity of a transition for coverage: its source state node id, event type and target ids. */
export function transitionKey(source: string, event: string, targets: readonly string[]): string {
  return `${source}|${event}|${[...targets].sort().join(',')}`;
}

/**
 * A state value as one readable line: `active.idle`, `gathering.{logs.fetching_logs, metrics.fetching_metrics}`.
 */
export function stateLabel(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return String(value);
  const entries = Object.entries(value as Record<string, unknown>);
  const parts = entries.map(([key, child]) =>
    child !== null && typeof child === 'object' && Object.keys(child).length === 0 ? key : `${key}.${stateLabel(child)}`,
  );
  return parts.length === 1 ? parts[0]! : `{${parts.join(', ')}}`;
}
