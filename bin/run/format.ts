import type { RuntimeEvent } from '@flowing/runtime';

const WIDTH = 20;

function statePath(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => {
        const rest = statePath(v);
        return rest === '' ? k : `${k}.${rest}`;
      })
      .join(' | ');
  }
  return '';
}

function short(value: unknown, max = 100): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The data fields the printer reads; each event type carries only some of them. */
interface PrintedFields {
  readonly [field: string]: unknown;
  readonly error?: { readonly code?: unknown; readonly message?: unknown };
  readonly usage?: { readonly promptTokens?: unknown; readonly completionTokens?: unknown };
}

/** One readable line for an event, as `flowing run` prints it. */
export function formatEvent(event: RuntimeEvent): string {
  const d = event.data as PrintedFields;
  let summary: string;
  switch (event.type) {
    case 'session.started':
      summary = `${d.machineId}`;
      break;
    case 'state.changed':
      summary = `${statePath(d.state)}  (${d.event})`;
      break;
    case 'transition.rejected':
      summary = `${d.event ?? '(no type)'} refused: ${d.code} — ${d.reason}`;
      break;
    case 'tool.started':
      summary = `${d.tool} ${short(d.args)}`;
      break;
    case 'tool.retry':
      summary = `${d.tool} attempt ${d.attempt} in ${d.delayMs} ms after ${d.error?.code}`;
      break;
    case 'tool.completed':
      summary = `${d.tool} -> ${short(d.output)} (${d.durationMs} ms)`;
      break;
    case 'tool.failed':
      summary = `${d.tool} ${d.error?.code}: ${d.error?.message}`;
      break;
    case 'tool.unknown_outcome':
      summary = `${d.tool} (${d.callId}) outcome unknown: a person must decide`;
      break;
    case 'approval.requested':
      summary = `${d.tool} ${short(d.args)} waits for APPROVE or REJECT`;
      break;
    case 'approval.decided':
      summary = `${d.tool} ${d.decision}`;
      break;
    case 'llm.started':
      summary = `${d.kind}${d.model ? ` (${d.model})` : ''} via ${d.provider}`;
      break;
    case 'llm.completed':
      summary = `${d.kind} -> ${short(d.output)} (${d.latencyMs} ms, ${d.usage?.promptTokens ?? 0}+${d.usage?.completionTokens ?? 0} tokens)`;
      break;
    case 'llm.failed':
      summary = `${d.kind} ${d.error?.code}: ${d.error?.message}`;
      break;
    case 'conversation.summary_failed':
      summary = `summary ${d.error?.code}: sent the last ${d.window} turns instead`;
      break;
    case 'llm.retry':
      summary = `${d.kind} attempt ${d.attempt} in ${d.delayMs} ms after ${d.error?.code}`;
      break;
    case 'tool.progress':
      summary = `${d.tool}: ${d.message}`;
      break;
    case 'tool.bind_overridden':
      summary = `${d.tool}: the model sent ${short(d.sent)}; the bound value was used`;
      break;
    case 'message.delta':
      summary = short(d.text);
      break;
    case 'message.complete':
      summary = `“${d.text}”`;
      break;
    case 'error':
      summary = `${d.code}: ${d.message}`;
      break;
    case 'session.done':
      summary = statePath(d.state);
      break;
    case 'session.cancelled':
      summary = `${d.reason}`;
      break;
    default:
      summary = short(d);
  }
  return `${String(event.seq).padStart(4)}  ${event.type.padEnd(WIDTH)} ${summary}`;
}
