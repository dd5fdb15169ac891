import { createHash } from 'node:crypto';
import type * as Api from '@opentelemetry/api';
import type { RuntimeEvent } from '../events.ts';
import type { AttributeValue, SpanLike, TracerLike } from './types.ts';

// SpanStatusCode and SpanKind of @opentelemetry/api, as numbers: the values are part of its stable API.
const STATUS_ERROR = 2;
const KIND_INTERNAL = 0;
const KIND_CLIENT = 2;

/** The spans of one session that are open now. */
interface OpenSpans {
  turn: SpanLike;
  /** The turn's context, parent of the state spans. */
  turnContext: Api.Context;
  state?: { span: SpanLike; context: Api.Context };
  /** Tool and model calls in flight, by call id. */
  calls: Map<string, SpanLike>;
  lastAt: number;
}

/**
 * Turns each session's committed log into OpenTelemetry spans, after the fact, from the events' own times: a
 * `flowing.turn` span per piece of work a session does (an outside event and everything it causes, until the
 * session is quiet), a `flowing.state` span per state entered in it, and under the state a span per tool call
 * (`execute_tool <name>`) and per model call (`chat <model>`, with the GenAI semantic conventions' attributes).
 * Every span of a session carries the log's trace id (a UUID without its dashes, or a hash of another id), so the
 * `traceId` of any logged event finds its spans. Nothing here runs unless a tracer was given to the runtime.
 */
export class SessionTracer {
  private readonly open = new Map<string, OpenSpans>();

  constructor(
    private readonly tracer: TracerLike,
    private readonly api: typeof Api,
  ) {}

  /** Committed events of one session, in seq order. */
  events(events: readonly RuntimeEvent[]): void {
    for (const event of events) this.event(event);
  }

  /** The session is quiet (waiting, finished, failed or cancelled): its turn ends now, with every span still open. */
  quiet(sessionId: string, at: number): void {
    const spans = this.open.get(sessionId);
    if (!spans) return;
    for (const call of spans.calls.values()) call.end(at);
    spans.state?.span.end(at);
    spans.turn.end(Math.max(at, spans.lastAt));
    this.open.delete(sessionId);
  }

  private event(event: RuntimeEvent): void {
    const spans = this.open.get(event.sessionId) ?? this.startTurn(event);
    spans.lastAt = event.at;
    const d = event.data as Record<string, unknown>;
    switch (event.type) {
      case 'session.started':
      case 'session.migrated':
        spans.turn.setAttribute(
          `flowing.${event.type === 'session.started' ? 'spec_hash' : 'migrated_to'}`,
          text(event.type === 'session.started' ? d.specHash : d.toVersion),
        );
        return;
      case 'state.changed': {
        const outside = (d.payload as { type?: unknown } | undefined)?.type;
        if (typeof outside === 'string') {
          spans.turn.setAttribute('flowing.event.type', outside);
          spans.turn.updateName(`flowing.turn ${outside}`);
        }
        spans.state?.span.end(event.at);
        const state = statePath(d.state);
        const span = this.tracer.startSpan(
          `flowing.state ${state}`,
          {
            kind: KIND_INTERNAL,
            startTime: event.at,
            attributes: { 'flowing.state': state, 'flowing.event': text(d.event), 'flowing.seq': event.seq },
          },
          spans.turnContext,
        );
        spans.state = { span, context: this.api.trace.setSpan(spans.turnContext, span as Api.Span) };
        return;
      }
      case 'transition.rejected':
        spans.turn.addEvent('flowing.transition.rejected', { 'flowing.event.type': text(d.event), 'flowing.code': text(d.code) }, event.at);
        return;
      case 'tool.started':
        this.startCall(spans, text(d.callId), `execute_tool ${text(d.tool)}`, event.at, {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': text(d.tool),
          'gen_ai.tool.call.id': text(d.callId),
          'flowing.tool.resumed': d.resumed === true,
        });
        return;
      case 'llm.started': {
        const model = typeof d.model === 'string' ? d.model : text(d.provider);
        this.startCall(spans, text(d.callId), `chat ${model}`, event.at, {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': text(d.provider),
          'gen_ai.request.model': model,
          'flowing.llm.kind': text(d.kind),
        });
        return;
      }
      case 'tool.retry':
        spans.calls.get(text(d.callId))?.addEvent('flowing.tool.retry', { 'flowing.attempt': Number(d.attempt) || 0 }, event.at);
        return;
      case 'llm.completed': {
        const span = this.endCall(spans, text(d.callId));
        if (!span) return;
        const usage = (d.usage ?? {}) as { promptTokens?: number; completionTokens?: number };
        span.setAttribute('gen_ai.response.model', text(d.model));
        span.setAttribute('gen_ai.usage.input_tokens', usage.promptTokens ?? 0);
        span.setAttribute('gen_ai.usage.output_tokens', usage.completionTokens ?? 0);
        if (typeof d.finishReason === 'string') span.setAttribute('gen_ai.response.finish_reasons', [d.finishReason]);
        span.end(event.at);
        return;
      }
      case 'tool.completed':
        this.endCall(spans, text(d.callId))?.end(event.at);
        return;
      case 'tool.failed':
      case 'llm.failed':
      case 'tool.unknown_outcome': {
        const span = this.endCall(spans, text(d.callId));
        if (!span) return;
        const error = (d.error ?? {}) as { code?: unknown; message?: unknown };
        const code = event.type === 'tool.unknown_outcome' ? 'TOOL_UNKNOWN_OUTCOME' : text(error.code);
        span.setAttribute('error.type', code);
        span.setStatus({ code: STATUS_ERROR, message: text(error.message) || code });
        span.end(event.at);
        return;
      }
      case 'error':
        if (d.recoverable === false) spans.turn.setStatus({ code: STATUS_ERROR, message: `${text(d.code)}: ${text(d.message)}` });
        return;
      default:
        return;
    }
  }

  private startTurn(event: RuntimeEvent): OpenSpans {
    const { api } = this;
    const remote = api.trace.setSpanContext(api.ROOT_CONTEXT, {
      traceId: otelTraceId(event.traceId),
      spanId: otelSpanId(event.sessionId),
      traceFlags: api.TraceFlags.SAMPLED,
      isRemote: true,
    });
    const turn = this.tracer.startSpan(
      'flowing.turn',
      {
        kind: KIND_INTERNAL,
        startTime: event.at,
        attributes: { 'flowing.session.id': event.sessionId, 'flowing.trace_id': event.traceId, 'flowing.seq': event.seq },
      },
      remote,
    );
    const spans: OpenSpans = { turn, turnContext: api.trace.setSpan(remote, turn as Api.Span), calls: new Map(), lastAt: event.at };
    this.open.set(event.sessionId, spans);
    return spans;
  }

  private startCall(spans: OpenSpans, callId: string, name: string, at: number, attributes: Record<string, AttributeValue>): void {
    spans.calls.get(callId)?.end(at);
    const parent = spans.state?.context ?? spans.turnContext;
    spans.calls.set(
      callId,
      this.tracer.startSpan(name, { kind: KIND_CLIENT, startTime: at, attributes: { ...attributes, 'flowing.call.id': callId } }, parent),
    );
  }

  private endCall(spans: OpenSpans, callId: string): SpanLike | undefined {
    const span = spans.calls.get(callId);
    spans.calls.delete(callId);
    return span;
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

/** Dotted leaf paths of a state value, joined: `active.idle`, or `gathering.logs.done,gathering.metrics.wait`. */
function statePath(value: unknown, prefix = ''): string {
  if (typeof value === 'string') return prefix + value;
  if (value === null || typeof value !== 'object') return prefix || String(value);
  return Object.entries(value)
    .map(([key, child]) => statePath(child, `${prefix}${key}.`))
    .join(',');
}

const HEX32 = /^[0-9a-f]{32}$/;

/** The OpenTelemetry trace id of a log's trace id: a UUID without its dashes, else the first 128 bits of its sha256. */
export function otelTraceId(traceId: string): string {
  const plain = traceId.replaceAll('-', '').toLowerCase();
  return HEX32.test(plain) && plain !== '0'.repeat(32) ? plain : createHash('sha256').update(traceId).digest('hex').slice(0, 32);
}

/** The span id every turn of a session names as its parent: the session, which has no span of its own (it may last months). */
function otelSpanId(sessionId: string): string {
  return createHash('sha256').update(`session:${sessionId}`).digest('hex').slice(0, 16);
}

/**
 * The session tracer for a tracer the user gave: `@opentelemetry/api` is imported here, on first use, so a runtime
 * that does not trace never loads it.
 */
export async function createSessionTracer(tracer: TracerLike): Promise<SessionTracer> {
  const api = await import('@opentelemetry/api');
  return new SessionTracer(tracer, api);
}
