/**
 * The part of an OpenTelemetry `Tracer` the runtime uses: `trace.getTracer('my-service')` from `@opentelemetry/api`
 * is one. Declared here, structurally, so that the runtime's types do not need `@opentelemetry/api` installed.
 */
export interface TracerLike {
  startSpan(name: string, options?: SpanOptionsLike, context?: unknown): SpanLike;
}

export interface SpanOptionsLike {
  /** 1 is SpanKind.SERVER, 2 CLIENT, 0 INTERNAL. */
  kind?: number;
  attributes?: Record<string, AttributeValue>;
  /** Milliseconds since the epoch. */
  startTime?: number;
  root?: boolean;
}

export type AttributeValue = string | number | boolean | string[] | number[];

export interface SpanLike {
  setAttribute(key: string, value: AttributeValue): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  addEvent(name: string, attributes?: Record<string, AttributeValue>, time?: number): unknown;
  updateName(name: string): unknown;
  end(endTime?: number): void;
}
