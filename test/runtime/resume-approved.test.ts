import { describe, expect, it } from 'vitest';
import { createMemoryStore, createRuntime, defineTool, type AnyTool } from '@flowing/runtime';
import { orderSupport } from '../../machines/order-support/order-support.machine.ts';
import { createRecordingStore } from '../helpers/runtime-store.ts';

describe('resume of an approved high-risk call', () => {
  it('re-runs an interrupted idempotent high-risk call once, on the approval it already had', async () => {
    const base = orderSupport.tools.issue_refund as AnyTool;
    let runs = 0;
    // A refund service that deduplicates on the idempotency key: safe to call again.
    const refund = defineTool({
      ...base,
      idempotent: true,
      run: async (input, context) => {
        runs++;
        await new Promise((resolve) => setTimeout(resolve, 20));
        return base.run(input, context);
      },
    }) as AnyTool;
    const { store, dumps } = createRecordingStore();
    const runtime = createRuntime({ machines: [orderSupport], store, tools: { issue_refund: refund } });
    const session = await runtime.createSession(orderSupport);
    await session.send({ type: 'USER_MESSAGE', text: 'I want a refund for A1002' });
    await session.send({ type: 'APPROVE' });
    const finished = await session.snapshot();
    expect((finished.context as { refundId?: string }).refundId).toBeDefined();

    const k = dumps.findIndex((dump) => {
      const entry = [...(dump.journal.get(session.id)?.values() ?? [])].find((e) => e.name === 'issue_refund');
      return entry !== undefined && entry.completed === undefined;
    });
    expect(k).toBeGreaterThanOrEqual(0);
    runs = 0;
    const again = createRuntime({
      machines: [orderSupport],
      store: createMemoryStore({ data: dumps[k]! }),
      tools: { issue_refund: refund },
    });
    await again.resume(session.id);
    const resumed = await again.session(session.id).snapshot();
    expect(runs).toBe(1);
    expect(resumed.status).toBe('waiting');
    expect((resumed.context as { refundId?: string }).refundId).toBe((finished.context as { refundId?: string }).refundId);
    const failures = (await again.store.readEvents(session.id)).filter((e) => e.type === 'tool.failed');
    expect(failures).toEqual([]);
  });
});
