import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, defineTool, type RuntimeEvent } from '@flowing/runtime';
import { specHash } from '@flowing/codegen';
import type { FlowSpec } from '@flowing/spec';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { sessionAt } from '@flowing/protocol';
import { HistoryError } from '../../studio/src/inspect/history/errors.ts';
import { FoldCache } from '../../studio/src/inspect/history/fold-cache.ts';
import { findJump, stepCursor } from '../../studio/src/inspect/history/jumps.ts';
import { readSessionFile as parseSessionFile } from '../../studio/src/inspect/history/read-file.ts';
import { browserSpecHash } from '../../studio/src/inspect/history/spec-hash.ts';
import { callBars, isOpenAt, timelineLanes } from '../../studio/src/inspect/history/timeline.ts';
import { countingTools } from '../helpers/runtime-counting.ts';

const spec = (id: string) => JSON.parse(readFileSync(new URL(`../../machines/${id}/${id}.flow.json`, import.meta.url), 'utf8')) as FlowSpec;

/** A flaky resolve_user: fails once with TOOL_FAILED, then answers (it is idempotent, so the runtime retries it). */
function flakyResolveUser() {
  let calls = 0;
  return defineTool({
    ...orderSupport.tools.resolve_user!,
    async run(input, context) {
      calls++;
      if (calls === 1) throw new Error('connection reset');
      return orderSupport.tools.resolve_user!.run(input, context);
    },
  });
}

/** A real order-support session: a refused APPROVE while idle, a refund with a retried tool, approved and paid. */
async function recordedRefund(): Promise<{ events: RuntimeEvent[]; counts: Record<string, number> }> {
  const { tools, counts } = countingTools({ ...orderSupport.tools, resolve_user: flakyResolveUser() });
  const runtime = createRuntime({ machines: [orderSupport], store: createMemoryStore(), tools, limits: { retryBaseMs: 1, retryMaxMs: 2 } });
  const session = await runtime.createSession(orderSupport);
  await session.send({ type: 'APPROVE' });
  await session.send({ type: 'USER_MESSAGE', text: 'I want a refund for A1002' });
  await session.send({ type: 'APPROVE' });
  await session.send({ type: 'USER_MESSAGE', text: 'where is order Z9999' });
  return { events: (await session.events()).map((e) => ({ ...e })), counts };
}

function exportText(events: readonly RuntimeEvent[], header: Record<string, unknown> = {}): string {
  const head = {
    kind: 'flowing.session',
    formatVersion: 1,
    machineId: 'order-support',
    specHash: 'abc',
    sessionId: events[0]!.sessionId,
    exportedAt: 1,
    events: events.length,
    journal: 1,
    ...header,
  };
  return (
    [head, ...events, { journal: { kind: 'tool', key: 'fetch@1', name: 'query_order', idempotent: true, startedAt: 1 } }]
      .map((l) => JSON.stringify(l))
      .join('\n') + '\n'
  );
}

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(HistoryError);
    return (error as HistoryError).code;
  }
  return 'no error';
}

describe('step-through over a recorded order-support log', () => {
  it('gives at every index the same session as folding the log from the start', async () => {
    const { events } = await recordedRefund();
    const cache = new FoldCache();
    // Backwards first, then forwards: the cache folds once and answers both ways.
    // Index i is the event with seq i + 1 (the log starts at seq 1); -1 is before the first event.
    for (let i = events.length - 1; i >= -1; i--) expect(cache.at(events, i)).toEqual(sessionAt(events, i + 1));
    for (let i = 0; i < events.length; i++) expect(cache.at(events, i)).toBe(cache.at(events, i));
    expect(cache.folded).toBe(events.length);
  });

  it('keeps the folded views when the log grows and starts over for another log', async () => {
    const { events } = await recordedRefund();
    const cache = new FoldCache();
    const head = events.slice(0, 5);
    const atFour = cache.at(head, 4);
    expect(cache.at([...head, ...events.slice(5)], 4)).toBe(atFour);
    const other = events.map((e) => ({ ...e }));
    expect(cache.at(other, 4)).not.toBe(atFour);
    expect(cache.at(other, 4)).toEqual(atFour);
    expect(cache.folded).toBe(5);
  });

  it('jumps to the next and previous rejection, tool call and error', async () => {
    const { events } = await recordedRefund();
    const rejected = events.findIndex((e) => e.type === 'transition.rejected');
    expect(events[rejected]!.data).toMatchObject({ event: 'APPROVE', code: 'NO_TRANSITION' });
    expect(findJump(events, -1, 'rejection')).toBe(rejected);
    expect(findJump(events, rejected, 'rejection')).toBeUndefined();
    const tools = events.flatMap((e, i) => (e.type === 'tool.started' ? [i] : []));
    expect(findJump(events, tools[0]!, 'tool')).toBe(tools[1]);
    expect(findJump(events, tools[1]!, 'tool', -1)).toBe(tools[0]);
    const failed = events.findIndex((e) => e.type === 'tool.failed');
    expect(findJump(events, tools.at(-1)!, 'error')).toBe(failed);
    expect(stepCursor(0, -1, events.length)).toBe(0);
    expect(stepCursor(events.length - 1, 1, events.length)).toBe(events.length - 1);
    expect(stepCursor(-1, 1, 0)).toBe(-1);
  });
});

describe('timeline bars', () => {
  it('draws tool calls with their retries and failures, model calls and the approval waited for', async () => {
    const { events, counts } = await recordedRefund();
    const bars = callBars(events);
    const resolve = bars.find((b) => b.name === 'resolve_user')!;
    expect(resolve).toMatchObject({ kind: 'tool', outcome: 'completed', attempts: 2 });
    expect(resolve.retries).toHaveLength(1);
    expect(resolve.retries[0]).toMatchObject({ attempt: 2, error: { code: 'TOOL_FAILED' } });
    expect(events[resolve.retries[0]!.index]!.type).toBe('tool.retry');
    const approval = bars.find((b) => b.kind === 'approval')!;
    expect(approval).toMatchObject({ name: 'issue_refund', outcome: 'approved', input: { order_id: 'A1002', amount: 120 } });
    expect(events[approval.startIndex]!.type).toBe('approval.requested');
    expect(events[approval.endIndex!]!.type).toBe('approval.decided');
    const refund = bars.find((b) => b.name === 'issue_refund' && b.kind === 'tool')!;
    expect(refund.startIndex).toBeGreaterThan(approval.endIndex!);
    expect(refund.output).toMatchObject({ refund_id: expect.any(String) });
    const notFound = bars.find((b) => b.outcome === 'failed')!;
    expect(notFound).toMatchObject({ name: 'query_order', error: { code: 'ORDER_NOT_FOUND' } });
    expect(bars.filter((b) => b.kind === 'llm').every((b) => b.outcome === 'completed')).toBe(true);
    // One bar per call the tools actually ran (the retry is on its bar, not a second one).
    const toolBars = bars.filter((b) => b.kind === 'tool');
    expect(toolBars.length).toBe(Object.values(counts).reduce((a, b) => a + b, 0) - 1);
    expect(timelineLanes(bars).map((l) => l.key)).toContain('approval:issue_refund');
    expect(isOpenAt(approval, approval.startIndex)).toBe(true);
    expect(isOpenAt(approval, approval.endIndex!)).toBe(false);
  });

  it('leaves a call without a result pending', async () => {
    const { events } = await recordedRefund();
    const cut = events.findIndex((e) => e.type === 'tool.started');
    const bar = callBars(events.slice(0, cut + 1)).find((b) => b.startIndex === cut);
    expect(bar).toMatchObject({ kind: 'tool', outcome: 'pending' });
    expect(bar!.endIndex).toBeUndefined();
  });
});

describe('session files', () => {
  it('reads an export back into the same log', async () => {
    const { events } = await recordedRefund();
    const file = parseSessionFile(exportText(events));
    expect(file.events).toEqual(events);
    expect(file.header).toMatchObject({ machineId: 'order-support', specHash: 'abc' });
    expect(file.journal).toEqual([{ kind: 'tool', key: 'fetch@1', name: 'query_order', idempotent: true, startedAt: 1 }]);
    expect(parseSessionFile(exportText(events, { events: events.length, journal: 1 })).events).toHaveLength(events.length);
  });

  it('refuses hostile and damaged files with a code naming the problem', async () => {
    const { events } = await recordedRefund();
    const text = exportText(events);
    expect(codeOf(() => parseSessionFile(''))).toBe('INSPECT_FILE_EMPTY');
    expect(codeOf(() => parseSessionFile('\n\n'))).toBe('INSPECT_FILE_EMPTY');
    expect(codeOf(() => parseSessionFile(text.slice(0, Math.floor(text.length / 2))))).toBe('INSPECT_FILE_TRUNCATED');
    expect(codeOf(() => parseSessionFile(exportText(events.slice(0, 6), { events: 7 })))).toBe('INSPECT_FILE_TRUNCATED');
    expect(codeOf(() => parseSessionFile(exportText(events, { events: events.length, journal: 2 })))).toBe('INSPECT_FILE_TRUNCATED');
    expect(codeOf(() => parseSessionFile(exportText([...events.slice(0, 3), ...events.slice(4)])))).toBe('INSPECT_FILE_TRUNCATED');
    expect(codeOf(() => parseSessionFile(exportText(events.slice(1).map((e, i) => ({ ...e, seq: i + 1 })))))).toBe(
      'INSPECT_FILE_BAD_EVENT',
    );
    expect(codeOf(() => parseSessionFile(exportText(events, { kind: 'flowing.spec' })))).toBe('INSPECT_FILE_WRONG_KIND');
    expect(codeOf(() => parseSessionFile('{"machines": []}\n'))).toBe('INSPECT_FILE_WRONG_KIND');
    // A pretty-printed JSON document (a flow spec opened by mistake) is a file of another kind, not a damaged one.
    const spec = readFileSync(new URL('../../machines/order-support/order-support.flow.json', import.meta.url), 'utf8');
    expect(spec.split('\n').length).toBeGreaterThan(2);
    expect(codeOf(() => parseSessionFile(spec))).toBe('INSPECT_FILE_WRONG_KIND');
    expect(codeOf(() => parseSessionFile('<html>not a session</html>\n'))).toBe('INSPECT_FILE_TRUNCATED');
    expect(codeOf(() => parseSessionFile('<html>\n<body>\n'))).toBe('INSPECT_FILE_NOT_JSON');
    expect(codeOf(() => parseSessionFile(exportText(events, { formatVersion: 2 })))).toBe('INSPECT_FILE_VERSION');
    expect(codeOf(() => parseSessionFile(exportText(events, { sessionId: 42 })))).toBe('INSPECT_FILE_WRONG_KIND');
    const lines = text.split('\n');
    lines[3] = '{"seq": 3, "type": "state.changed"}';
    expect(codeOf(() => parseSessionFile(lines.join('\n')))).toBe('INSPECT_FILE_BAD_EVENT');
    lines[3] = '[1, 2';
    const error = (() => {
      try {
        parseSessionFile(lines.join('\n'));
      } catch (e) {
        return e as HistoryError;
      }
    })()!;
    expect(error.code).toBe('INSPECT_FILE_NOT_JSON');
    expect(error.message).toContain('line 4');
  });
});

describe('spec hash in the browser', () => {
  it("equals the generator's hash for every example machine and ignores layout only", async () => {
    for (const id of ['order-support', 'incident-triage']) {
      const s = spec(id);
      expect(await browserSpecHash(s)).toBe(specHash(s));
      expect(await browserSpecHash({ ...s, layout: {} })).toBe(specHash(s));
      const edited = { ...s, description: `${s.description ?? ''} (edited)` };
      expect(await browserSpecHash(edited)).toBe(specHash(edited));
      expect(await browserSpecHash(edited)).not.toBe(specHash(s));
    }
    expect(await browserSpecHash(spec('order-support'))).toBe(orderSupport.specHash);
  });
});
