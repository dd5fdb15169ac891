import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it, vi } from 'vitest';
import { createRuntime, createScriptedProvider, type LlmProvider } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';

const CHILD = fileURLToPath(new URL('../helpers/trace-child.ts', import.meta.url));

/** The scripted model, reporting token usage and a finish reason the way a real provider does. */
function scriptedWithUsage(): LlmProvider {
  const scripted = createScriptedProvider();
  const counted =
    <R, O>(call: (request: R, options: O) => Promise<{ output: unknown }>) =>
    async (request: R, options: O) => ({
      ...(await call(request, options)),
      model: 'scripted-1',
      usage: { promptTokens: 40, completionTokens: 8 },
      finishReason: 'stop',
    });
  return {
    ...scripted,
    classify: counted(scripted.classify.bind(scripted)),
    extract: counted(scripted.extract.bind(scripted)),
    generate: counted(scripted.generate.bind(scripted)),
    agent: counted(scripted.agent.bind(scripted)),
  } as LlmProvider;
}

/** The spans as an indented tree, children in start order: one line per span. */
function tree(spans: readonly ReadableSpan[]): string[] {
  const byParent = new Map<string | undefined, ReadableSpan[]>();
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    const key = parent && ids.has(parent) ? parent : undefined;
    byParent.set(key, [...(byParent.get(key) ?? []), span]);
  }
  const lines: string[] = [];
  const visit = (parent: string | undefined, depth: number) => {
    const children = [...(byParent.get(parent) ?? [])].sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    for (const span of children) {
      lines.push(`${'  '.repeat(depth)}${span.name}`);
      visit(span.spanContext().spanId, depth + 1);
    }
  };
  visit(undefined, 0);
  return lines;
}

describe('OpenTelemetry spans of a session', () => {
  it('exports a turn, state, tool call and model call tree under the trace id of the log, with the GenAI attributes', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const runtime = createRuntime({ machines: [orderSupport], llm: scriptedWithUsage(), tracer: provider.getTracer('flowing-test') });
    const session = await runtime.createSession(orderSupport, { userId: 'u-ada' });
    await session.send({ type: 'USER_MESSAGE', text: 'I want a refund for A1002' });
    await session.send({ type: 'APPROVE' });
    await vi.waitFor(() => expect(exporter.getFinishedSpans().filter((s) => s.name.startsWith('flowing.turn'))).toHaveLength(3));
    const spans = exporter.getFinishedSpans();

    expect(tree(spans)).toEqual([
      'flowing.turn',
      '  flowing.state active.idle',
      'flowing.turn USER_MESSAGE',
      '  flowing.state active.classify',
      '    chat gpt-4o-mini',
      '  flowing.state active.extract_order_id',
      '    chat gpt-4o-mini',
      '  flowing.state active.resolve_user',
      '    execute_tool resolve_user',
      '  flowing.state active.fetch_order',
      '    execute_tool query_order',
      '  flowing.state active.await_approval',
      'flowing.turn APPROVE',
      '  flowing.state active.refund',
      '    execute_tool issue_refund',
      '  flowing.state active.idle',
    ]);

    const log = await session.events();
    const traceId = log[0]!.traceId;
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId.replaceAll('-', '')]));
    const turns = spans.filter((s) => s.name.startsWith('flowing.turn'));
    // The turns of one session hang under one parent id (the session's), which links them without a months-long span.
    expect(new Set(turns.map((s) => s.parentSpanContext?.spanId)).size).toBe(1);
    expect(turns[0]!.attributes).toMatchObject({
      'flowing.session.id': session.id,
      'flowing.trace_id': traceId,
      'flowing.spec_hash': orderSupport.specHash,
    });

    const classify = spans.find((s) => s.name === 'chat gpt-4o-mini')!;
    expect(classify.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'scripted-1',
      'gen_ai.usage.input_tokens': 40,
      'gen_ai.usage.output_tokens': 8,
      'gen_ai.response.finish_reasons': ['stop'],
      'flowing.llm.kind': 'classify',
    });
    const refund = spans.find((s) => s.name === 'execute_tool issue_refund')!;
    expect(refund.attributes).toMatchObject({ 'gen_ai.tool.name': 'issue_refund', 'gen_ai.operation.name': 'execute_tool' });
    // Each span's times are the log's: the tool's span starts at its tool.started event and ends at its tool.completed.
    const started = log.find((e) => e.type === 'tool.started' && (e.data as { tool: string }).tool === 'issue_refund')!;
    const completed = log.find((e) => e.type === 'tool.completed' && (e.data as { tool: string }).tool === 'issue_refund')!;
    expect(refund.startTime[0] * 1000 + refund.startTime[1] / 1e6).toBeCloseTo(started.at, 0);
    expect(refund.endTime[0] * 1000 + refund.endTime[1] / 1e6).toBeCloseTo(completed.at, 0);
  });

  it('marks a failed tool call as an error span with its code', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const runtime = createRuntime({ machines: [orderSupport], tracer: provider.getTracer('flowing-test') });
    const session = await runtime.createSession(orderSupport, { userId: 'u-ada' });
    await session.send({ type: 'USER_MESSAGE', text: 'where is my order Z9999' });
    await vi.waitFor(() => expect(exporter.getFinishedSpans().filter((s) => s.name.startsWith('flowing.turn'))).toHaveLength(2));
    const failed = exporter.getFinishedSpans().find((s) => s.name === 'execute_tool query_order')!;
    expect(failed.status).toMatchObject({ code: 2 });
    expect(failed.attributes['error.type']).toBe('ORDER_NOT_FOUND');
  });
});

describe('a runtime without a tracer', () => {
  // A resolve hook that refuses every @opentelemetry/* import: the session must not notice, unless it traces.
  const BLOCK = `data:text/javascript,${encodeURIComponent(
    'import { register } from "node:module";' +
      `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent('export async function resolve(s, c, next) { if (s.startsWith("@opentelemetry/")) throw new Error("blocked " + s); return next(s, c); }')}`)});`,
  )}`;
  const run = (...args: string[]) =>
    spawnSync(
      process.execPath,
      ['--conditions=@flowing/source', '--import', import.meta.resolve('tsx'), '--import', BLOCK, CHILD, ...args],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );

  it('never imports @opentelemetry/api, and one given a tracer does (the hook that refuses it is seen)', () => {
    const plain = run();
    expect(plain.stdout).toBe('done waiting\n');
    expect(plain.stderr).not.toMatch(/FLOWING_TRACER_UNAVAILABLE|blocked/);
    const traced = run('--trace');
    expect(traced.stdout).toBe('done waiting\n');
    expect(traced.stderr).toMatch(/FLOWING_TRACER_UNAVAILABLE.*blocked @opentelemetry\/api/s);
  }, 60_000);
});
