import type { RuntimeEvent } from '@flowing/protocol';

/** What a bar on the timeline stands for. */
export type CallKind = 'tool' | 'llm' | 'approval';

/** How a call ended, or that it had not ended yet at the end of the log. */
export type CallOutcome = 'completed' | 'failed' | 'unknown_outcome' | 'approved' | 'rejected' | 'pending';

/** One retry of a tool call: the attempt it starts and the failure that caused it. */
export interface CallRetry {
  index: number;
  at: number;
  attempt: number;
  delayMs?: number;
  error?: unknown;
}

/** A tool call, a model call or an approval waited for, from its first event to its last. */
export interface CallBar {
  /** The call's journal key, or the approval's id. */
  id: string;
  kind: CallKind;
  /** Tool name, model call kind (classify, extract, generate, agent) or the tool the approval is for. */
  name: string;
  /** Index in the log of the event that started it, and its time. */
  startIndex: number;
  startAt: number;
  /** Index and time of the event that ended it; undefined while it is pending. */
  endIndex?: number;
  endAt?: number;
  outcome: CallOutcome;
  attempts: number;
  retries: CallRetry[];
  input?: unknown;
  output?: unknown;
  error?: unknown;
  /** The call was started again after a restart (its journal entry existed). */
  resumed: boolean;
}

/** One row of the chart: every bar of one tool, one model call kind or the approvals for one tool. */
export interface TimelineLane {
  key: string;
  kind: CallKind;
  name: string;
  bars: CallBar[];
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

function finish(bar: CallBar, index: number, at: number, outcome: CallOutcome): void {
  bar.endIndex = index;
  bar.endAt = at;
  bar.outcome = outcome;
}

/**
 * The calls of a log as bars: tool calls (with retries and failures), model calls and approvals (from the request to
 * the decision), in order of their start. Computed from the recorded events alone.
 * @example callBars(events).filter((bar) => bar.outcome === 'failed')
 */
export function callBars(events: readonly RuntimeEvent[]): CallBar[] {
  const bars: CallBar[] = [];
  const open = new Map<string, CallBar>();
  events.forEach((event, index) => {
    const d = event.data;
    switch (event.type) {
      case 'tool.started':
      case 'llm.started': {
        const kind = event.type === 'tool.started' ? 'tool' : 'llm';
        const key = `${kind}:${text(d.callId)}`;
        const resumedBar = open.get(key);
        if (resumedBar) {
          // The same call started again after a restart: one bar, marked resumed.
          resumedBar.resumed = true;
          return;
        }
        const bar: CallBar = {
          id: text(d.callId),
          kind,
          name: kind === 'tool' ? text(d.tool) : text(d.kind),
          startIndex: index,
          startAt: event.at,
          outcome: 'pending',
          attempts: 1,
          retries: [],
          input: kind === 'tool' ? d.args : d.model,
          resumed: d.resumed === true,
        };
        bars.push(bar);
        open.set(key, bar);
        return;
      }
      case 'tool.retry': {
        const bar = open.get(`tool:${text(d.callId)}`);
        if (!bar) return;
        const attempt = typeof d.attempt === 'number' ? d.attempt : bar.attempts + 1;
        bar.retries.push({
          index,
          at: event.at,
          attempt,
          ...(typeof d.delayMs === 'number' ? { delayMs: d.delayMs } : {}),
          error: d.error,
        });
        bar.attempts = attempt;
        return;
      }
      case 'tool.completed':
      case 'llm.completed':
      case 'tool.failed':
      case 'llm.failed':
      case 'tool.unknown_outcome': {
        const kind = event.type.startsWith('tool.') ? 'tool' : 'llm';
        const key = `${kind}:${text(d.callId)}`;
        const bar = open.get(key);
        if (!bar) return;
        open.delete(key);
        if (typeof d.attempts === 'number') bar.attempts = d.attempts;
        if (event.type.endsWith('.completed')) {
          bar.output = d.output;
          finish(bar, index, event.at, 'completed');
        } else if (event.type === 'tool.unknown_outcome') {
          bar.error = { reason: d.reason ?? 'the result was never recorded' };
          finish(bar, index, event.at, 'unknown_outcome');
        } else {
          bar.error = d.error;
          finish(bar, index, event.at, 'failed');
        }
        return;
      }
      case 'approval.requested': {
        const bar: CallBar = {
          id: text(d.approvalId),
          kind: 'approval',
          name: text(d.tool),
          startIndex: index,
          startAt: event.at,
          outcome: 'pending',
          attempts: 1,
          retries: [],
          input: d.args,
          resumed: false,
        };
        bars.push(bar);
        open.set(`approval:${bar.id}`, bar);
        return;
      }
      case 'approval.decided': {
        const key = `approval:${text(d.approvalId)}`;
        const bar = open.get(key);
        if (!bar) return;
        open.delete(key);
        bar.output = { decision: d.decision, ...(d.reason ? { reason: d.reason } : {}) };
        finish(bar, index, event.at, d.decision === 'approved' ? 'approved' : 'rejected');
        return;
      }
      default:
    }
  });
  return bars;
}

/** The bars grouped into one lane per tool, model call kind and approved tool, in order of first use. */
export function timelineLanes(bars: readonly CallBar[]): TimelineLane[] {
  const lanes = new Map<string, TimelineLane>();
  for (const bar of bars) {
    const key = `${bar.kind}:${bar.name}`;
    let lane = lanes.get(key);
    if (!lane) lanes.set(key, (lane = { key, kind: bar.kind, name: bar.name, bars: [] }));
    lane.bars.push(bar);
  }
  return [...lanes.values()];
}

/** Whether the bar is in flight (started, not yet ended) right after the event at `index`. */
export function isOpenAt(bar: CallBar, index: number): boolean {
  return bar.startIndex <= index && (bar.endIndex === undefined || bar.endIndex > index);
}
